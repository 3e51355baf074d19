import { Migration } from '@mikro-orm/migrations';

/**
 * Console operators and their sessions (server/domain/operators/entities.ts;
 * this SQL is what MikroORM's schema generator produces from those entities).
 * Sessions keep only the SHA-256 of the cookie token; deleting an operator
 * deletes their sessions.
 */
export class Migration0022Operators extends Migration {
  override name = '0022-operators';

  override up(): void {
    this.addSql(
      `create table "operators" ("id" uuid not null, "email" varchar(254) not null, "name" varchar(100) not null, "role" text not null, "brand_ids" jsonb null, "password_hash" varchar(255) not null, "totp_secret" text null, "totp_pending_secret" text null, "totp_last_step" bigint null, "disabled" boolean not null default false, "failed_logins" int not null default 0, "failed_logins_since" timestamptz null, "locked_until" timestamptz null, "last_login_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"))`,
    );
    this.addSql(`alter table "operators" add constraint "operators_email_unique" unique ("email")`);
    this.addSql(`alter table "operators" add constraint "operators_role_check" check ("role" in ('owner', 'operator', 'viewer'))`);
    this.addSql(
      `create table "operator_sessions" ("id" bigserial primary key, "operator_id" uuid not null, "token_hash" varchar(64) not null, "created_at" timestamptz not null, "last_seen_at" timestamptz not null, "expires_at" timestamptz not null)`,
    );
    this.addSql(`alter table "operator_sessions" add constraint "operator_sessions_token_hash_unique" unique ("token_hash")`);
    this.addSql(`create index "operator_sessions_expires_at_index" on "operator_sessions" ("expires_at")`);
    this.addSql(`alter table "operator_sessions" add constraint "operator_sessions_operator_id_foreign" foreign key ("operator_id") references "operators" ("id") on delete cascade`);
  }

  override down(): void {
    this.addSql('drop table "operator_sessions"');
    this.addSql('drop table "operators"');
  }
}
