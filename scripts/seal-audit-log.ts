import { sealAuditLogAt, auditOwnerRole } from '../server/infra/database/audit-owner.ts';

/**
 * `npm run db:seal-audit-log`: for a DATABASE_URL setup, gives the audit log to
 * a role of its own so the service's role may only add to it and read it
 * (server/infra/database/audit-owner.ts; the embedded default does this at
 * every start). Run by the database administrator after the service has
 * applied its migrations once:
 *
 *   DATABASE_URL=postgres://paycollect:…@db/paycollect \
 *   DATABASE_ADMIN_URL=postgres://postgres:…@db/paycollect npm run db:seal-audit-log
 *
 * DATABASE_ADMIN_URL is a superuser's connection to the same database (it
 * creates a role and an event trigger); the service never uses it.
 */
const fail = (message: string): never => {
  process.stderr.write(`${message}\n`);
  process.exit(78); // EX_CONFIG
};

const appUrl = process.env.DATABASE_URL ?? fail('DATABASE_URL is not set: it names the service\'s role (its user).');
const adminUrl = process.env.DATABASE_ADMIN_URL ?? fail('DATABASE_ADMIN_URL is not set: a superuser connection to the application database.');
const appRole = decodeURIComponent(new URL(appUrl).username);
if (!appRole) fail('DATABASE_URL names no user: the service\'s role is the user in it.');
const database = (u: string) => decodeURIComponent(new URL(u).pathname.replace(/^\//, ''));
if (database(appUrl) !== database(adminUrl)) fail(`DATABASE_ADMIN_URL must name the service's database (${database(appUrl)}), not ${database(adminUrl) || 'none'}.`);

await sealAuditLogAt(adminUrl, appRole);
process.stdout.write(`audit_log now belongs to ${auditOwnerRole(appRole)}; ${appRole} may INSERT and SELECT it only\n`);
