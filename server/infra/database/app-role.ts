import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * The embedded cluster's application role. The service connects as this role,
 * never as the superuser: a SQL injection or a leaked connection string then
 * cannot read other databases' files, run programs (`COPY … PROGRAM`), create
 * roles or turn off row checks. The role owns the application database and
 * everything in it, so migrations and pg-boss's schema work under it.
 */
export interface AppRole {
  name: string;
  password: string;
}

const ATTRIBUTES = 'LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS INHERIT';
const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The SCRAM-SHA-256 verifier PostgreSQL would store for this password (RFC 5802,
 * 4096 iterations as PostgreSQL uses). Sent instead of the password, so the
 * password is in no SQL text the server could log (it logs a failing statement).
 */
function scramVerifier(password: string, salt: Buffer = randomBytes(16)): string {
  const iterations = 4096;
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const storedKey = createHash('sha256').update(createHmac('sha256', salted).update('Client Key').digest()).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/**
 * Creates (or re-asserts) the role and its database, with the superuser's
 * connection. Idempotent, and serialised across processes by an advisory lock:
 * the CLI may start beside a running server.
 */
export async function ensureAppRole(superuserBaseUrl: string, database: string, role: AppRole): Promise<void> {
  const admin = new pg.Client({ connectionString: `${superuserBaseUrl}/postgres` });
  await admin.connect();
  try {
    await admin.query("SELECT pg_advisory_lock(hashtext('paycollect:app-role'))");
    const password = admin.escapeLiteral(scramVerifier(role.password));
    const exists = (await admin.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role.name])).rowCount;
    // ALTER on every start: the attributes cannot drift, and the password follows secrets.json.
    await admin.query(`${exists ? 'ALTER' : 'CREATE'} ROLE ${ident(role.name)} WITH ${ATTRIBUTES} PASSWORD ${password}`);
    const db = await admin.query<{ owner: string }>('SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = $1', [database]);
    if (!db.rowCount) await admin.query(`CREATE DATABASE ${ident(database)} OWNER ${ident(role.name)}`);
    else if (db.rows[0]!.owner !== role.name) await admin.query(`ALTER DATABASE ${ident(database)} OWNER TO ${ident(role.name)}`);
    await handOverObjects(`${superuserBaseUrl}/${database}`, role.name);
    await admin.query("SELECT pg_advisory_unlock(hashtext('paycollect:app-role'))");
  } finally {
    await admin.end();
  }
}

/**
 * A data directory from before the role existed holds tables, sequences,
 * functions and pg-boss's schema owned by the superuser. They become the
 * role's, so the service keeps working under it. Objects of extensions, the
 * system schemas, and objects that follow their table (indexes, a column's
 * sequence, row types) are left alone; partitions are handed over one by one
 * (ALTER TABLE on the parent does not recurse). REASSIGN OWNED cannot be used: it
 * refuses the bootstrap superuser.
 */
async function handOverObjects(superuserDbUrl: string, roleName: string): Promise<void> {
  const c = new pg.Client({ connectionString: superuserDbUrl });
  await c.connect();
  try {
    await c.query(
      `DO $$
      DECLARE
        r record;
        target text := ${c.escapeLiteral(roleName)};
        me oid := (SELECT oid FROM pg_roles WHERE rolname = current_user);
      BEGIN
        FOR r IN
          SELECT n.nspname FROM pg_namespace n
           WHERE n.nspowner = me AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
             AND n.nspname NOT LIKE 'pg\\_temp\\_%' AND n.nspname NOT LIKE 'pg\\_toast\\_temp\\_%'
        LOOP
          EXECUTE format('ALTER SCHEMA %I OWNER TO %I', r.nspname, target);
        END LOOP;

        FOR r IN
          SELECT c.oid::regclass AS obj, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE c.relowner = me AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
             AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND n.nspname NOT LIKE 'pg\\_%'
             AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                              AND (d.deptype = 'e' OR (c.relkind = 'S' AND d.deptype IN ('a', 'i'))))
        LOOP
          EXECUTE format('ALTER %s %s OWNER TO %I',
            CASE r.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'S' THEN 'SEQUENCE' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END,
            r.obj, target);
        END LOOP;

        FOR r IN
          SELECT p.oid::regprocedure AS obj FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
           WHERE p.proowner = me AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
             AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
        LOOP
          EXECUTE format('ALTER ROUTINE %s OWNER TO %I', r.obj, target);
        END LOOP;

        FOR r IN
          SELECT t.oid::regtype AS obj, t.typtype FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
           WHERE t.typowner = me AND t.typtype IN ('e', 'd', 'r')
             AND t.typcategory <> 'A'
             AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
             AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_type'::regclass AND d.objid = t.oid AND d.deptype IN ('e', 'i'))
        LOOP
          EXECUTE format('ALTER %s %s OWNER TO %I', CASE r.typtype WHEN 'd' THEN 'DOMAIN' ELSE 'TYPE' END, r.obj, target);
        END LOOP;
      END $$`,
    );
  } finally {
    await c.end();
  }
}
