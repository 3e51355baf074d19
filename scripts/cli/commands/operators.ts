import { operatorRoles } from '../../../contract/vocabulary.ts';
import { UsageError, defined, list, need, oneOf } from '../args.ts';
import type { Commands, Ctx } from '../command.ts';
import { block, table } from '../output.ts';

const COLUMNS = ['id', 'email', 'name', 'role', 'brand_ids', 'totp_enabled', 'disabled', 'last_login_at'];

/** The operator with this e-mail (compared lower-cased, as the service stores it). */
async function byEmail(ctx: Ctx, email: string) {
  const wanted = email.trim().toLowerCase();
  const found = (await ctx.admin().operators.list()).find((o) => o.email === wanted);
  if (!found) throw new UsageError(`no operator has the e-mail ${wanted}`);
  return found;
}

function brands(raw: string[] | undefined): number[] | undefined {
  if (!raw) return undefined;
  const ids = raw.map((x) => x.trim()).filter(Boolean);
  if (!ids.length || ids.some((x) => !/^[1-9][0-9]{0,15}$/.test(x))) throw new UsageError('--brands must be brand ids separated by commas, e.g. 1,2');
  return ids.map(Number);
}

const shown = (o: { brand_ids: number[] | null }) => ({ ...o, brand_ids: o.brand_ids === null ? 'all' : o.brand_ids.join(',') });

export const operatorCommands: Commands = {
  'operators:create': {
    summary: 'Add a console operator (prints a one-time password)',
    usage: `--email <e-mail> --name <name> --role ${operatorRoles.join('|')} [--brands 1,2]`,
    options: { email: { type: 'string' }, name: { type: 'string' }, role: { type: 'string' }, brands: { type: 'string' } },
    notes: ['Without --brands the operator sees every brand. Owners always do.', 'The password is shown once: hand it over, and have the operator change it after logging in at /admin.'],
    async run(ctx, v) {
      const role = oneOf(v, 'role', operatorRoles);
      if (!role) throw new UsageError('--role is required');
      const created = await ctx.admin().operators.create(defined({ email: need(v, 'email'), name: need(v, 'name'), role, brand_ids: brands(list(v, 'brands')) }));
      return { json: created, text: `${block(shown(created.operator), COLUMNS)}\n\nOne-time password: ${created.password}` };
    },
  },
  'operators:list': {
    summary: 'List console operators',
    usage: '',
    options: {},
    async run(ctx) {
      const operators = await ctx.admin().operators.list();
      return { json: operators, text: table(operators.map(shown), COLUMNS) };
    },
  },
  'operators:reset-password': {
    summary: "Reset an operator's password (prints a one-time password; ends their sessions and any lock-out)",
    usage: '--email <e-mail>',
    options: { email: { type: 'string' } },
    async run(ctx, v) {
      const op = await byEmail(ctx, need(v, 'email'));
      const reset = await ctx.admin().operators.resetPassword(op.id);
      return { json: reset, text: `${block(shown(reset.operator), COLUMNS)}\n\nOne-time password: ${reset.password}` };
    },
  },
  'operators:disable': {
    summary: 'Disable an operator (ends their sessions; the last active owner cannot be disabled)',
    usage: '--email <e-mail>',
    options: { email: { type: 'string' } },
    async run(ctx, v) {
      const op = await byEmail(ctx, need(v, 'email'));
      const updated = await ctx.admin().operators.update(op.id, { disabled: true });
      return { json: updated, text: block(shown(updated), COLUMNS) };
    },
  },
};
