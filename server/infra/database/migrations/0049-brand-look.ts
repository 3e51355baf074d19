import { Migration } from '@mikro-orm/migrations';

/**
 * The checkout in the brand's look (README, "Checkout languages and branding"):
 * the brand's primary colour and support contact on `brands`, and its logo in a
 * table of its own so that reading a brand never reads the image.
 */
export class Migration0049BrandLook extends Migration {
  override name = '0049-brand-look';

  override up(): void {
    this.addSql(`create table "brand_logos" ("brand_id" bigint not null, "content_type" varchar(32) not null, "content" bytea not null, "sha256" varchar(64) not null, "width" int not null, "height" int not null, "updated_at" timestamptz not null default now(), primary key ("brand_id"));`);

    this.addSql(`alter table "brands" add "primary_color" varchar(7) null, add "support_phone" varchar(32) null, add "support_email" varchar(254) null;`);

    this.addSql(`alter table "brand_logos" add constraint "brand_logos_brand_id_fkey" foreign key ("brand_id") references "brands" ("id") on update cascade on delete cascade;`);
  }

  override down(): void {
    this.addSql(`drop table if exists "brand_logos" cascade;`);
    this.addSql(`alter table "brands" drop column "primary_color", drop column "support_phone", drop column "support_email";`);
  }
}
