import pg from 'pg';
import { sql } from 'kysely';
import type { AnyDb } from './database.ts';

/**
 * The audit log must outlive the application's own role: a SQL injection or a
 * leaked connection string of that role must not be able to empty or rewrite
 * it. A table's owner can always TRUNCATE it, DROP it or disable its
 * triggers, and the owner of the schema can DROP it; so the audit log belongs
 * to a role of its own that nobody logs in as (`<app role>_audit`), the
 * application's role is granted INSERT and SELECT only, and an event trigger
 * (which only a superuser can create or remove) refuses, to everyone but a
 * superuser, dropping the table, its append-only trigger or that trigger's
 * function (the schema owner could otherwise drop them).
 *
 * Run with a superuser's connection after the migrations: the embedded default
 * does it at every start (bootstrap.ts); with DATABASE_URL, the operator's
 * database administrator runs `npm run db:seal-audit-log` (README). Idempotent:
 * ownership is changed (an exclusive lock on the table) only when it differs.
 *
 * A later migration that alters the audit log cannot run as the application's
 * role any more: it has to hand the table back first, under the same superuser.
 */
export function auditOwnerRole(appRole: string): string {
  return `${appRole}_audit`;
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The statements; `client` is a superuser's connection to the application database. */
export async function sealAuditLog(client: pg.ClientBase, appRole: string): Promise<void> {
  const owner = auditOwnerRole(appRole);
  const lit = (v: string) => client.escapeLiteral(v);
  await client.query(`DO $$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = ${lit(owner)}) THEN
        CREATE ROLE ${ident(owner)} NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS;
      END IF;
      IF (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'public.audit_log'::regclass) <> ${lit(owner)} THEN
        ALTER TABLE public.audit_log OWNER TO ${ident(owner)};
      END IF;
      IF (SELECT pg_get_userbyid(proowner) FROM pg_proc WHERE oid = 'public.audit_log_append_only()'::regprocedure) <> ${lit(owner)} THEN
        ALTER FUNCTION public.audit_log_append_only() OWNER TO ${ident(owner)};
      END IF;
      IF NOT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'audit_guard') THEN
        CREATE SCHEMA audit_guard AUTHORIZATION ${ident(owner)};
      END IF;
    END $$`);
  // Granted every time: a no-op when in place, and it repairs a grant someone removed.
  await client.query(`REVOKE ALL ON public.audit_log FROM PUBLIC, ${ident(appRole)}`);
  await client.query(`GRANT SELECT, INSERT ON public.audit_log TO ${ident(appRole)}`);
  // In a schema the application's role does not own, owned by the audit role: neither can be replaced or dropped by the application.
  await client.query(`CREATE OR REPLACE FUNCTION audit_guard.refuse_audit_log_drop() RETURNS event_trigger LANGUAGE plpgsql AS $$
    DECLARE
      gone record;
    BEGIN
      IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RETURN;
      END IF;
      FOR gone IN SELECT object_identity FROM pg_event_trigger_dropped_objects() LOOP
        IF gone.object_identity IN ('public.audit_log', 'public.audit_log_append_only()', 'audit_log_append_only on public.audit_log') THEN
          RAISE EXCEPTION 'the audit log cannot be dropped (%)', gone.object_identity USING ERRCODE = 'insufficient_privilege';
        END IF;
      END LOOP;
    END $$`);
  await client.query(`ALTER FUNCTION audit_guard.refuse_audit_log_drop() OWNER TO ${ident(owner)}`);
  await client.query(`REVOKE ALL ON FUNCTION audit_guard.refuse_audit_log_drop() FROM PUBLIC`);
  const exists = await client.query("SELECT 1 FROM pg_event_trigger WHERE evtname = 'audit_log_guard'");
  if (!exists.rowCount) await client.query('CREATE EVENT TRIGGER audit_log_guard ON sql_drop EXECUTE FUNCTION audit_guard.refuse_audit_log_drop()');
}

/** sealAuditLog over a new connection to `superuserDbUrl` (the application database). */
export async function sealAuditLogAt(superuserDbUrl: string, appRole: string): Promise<void> {
  const client = new pg.Client({ connectionString: superuserDbUrl });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock(hashtext('paycollect:audit-owner'))");
    await sealAuditLog(client, appRole);
  } finally {
    await client.end();
  }
}

/**
 * Whether the service's own connection could empty the audit log (it owns the
 * table or is a superuser): true on a DATABASE_URL setup nobody sealed yet.
 */
 
export async function serviceCanEmptyAuditLog(db: AnyDb): Promise<boolean> {
  // Raw: a privilege function on no table, which the builder does not model.
  const { rows } = await sql<{ can: boolean }>`SELECT has_table_privilege('public.audit_log', 'TRUNCATE') AS can`.execute(db);
  return rows[0]?.can === true;
}
