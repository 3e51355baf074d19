import { readFileSync } from 'node:fs';
import { modes, brandStatuses, apiKeyDialects, apiKeyScopes, type ApiKeyScope } from '../../../contract/vocabulary.ts';
import { UsageError, defined, need, oneOf, opt, pageHelp, pageOptions, pageQuery, positiveInt } from '../args.ts';
import type { Commands } from '../command.ts';
import { block, table } from '../output.ts';

const BRAND_COLUMNS = ['id', 'name', 'status', 'timezone', 'created_at'];
const KEY_COLUMNS = ['id', 'name', 'prefix', 'mode', 'dialect', 'scopes', 'expires_at', 'created_at', 'last_used_at', 'revoked_at'];

/** `none` clears an optional brand field (null); absent leaves it as it is. */
const orNone = (v: string | undefined): string | null | undefined => (v === undefined ? undefined : v === 'none' ? null : v);

export const brandCommands: Commands = {
  'brand:create': {
    summary: 'Create a brand (merchant account)',
    usage: '--name <name> [--timezone <IANA zone>]',
    options: { name: { type: 'string' }, timezone: { type: 'string' } },
    async run(ctx, v) {
      const body = defined({ name: need(v, 'name'), timezone: opt(v, 'timezone') });
      const brand = await ctx.admin().brands.create(body);
      return { json: brand, text: block(brand) };
    },
  },
  'brand:list': {
    summary: 'List brands',
    usage: `[--status active|disabled] ${pageHelp}`,
    options: { status: { type: 'string' }, ...pageOptions },
    async run(ctx, v) {
      const page = await ctx.admin().brands.list(defined({ status: oneOf(v, 'status', brandStatuses), ...pageQuery(v) }));
      return { json: page, text: table(page.data, BRAND_COLUMNS, page.meta) };
    },
  },
  'brand:get': {
    summary: 'Show one brand',
    usage: '--brand <id>',
    options: { brand: { type: 'string' } },
    async run(ctx, v) {
      const brand = await ctx.admin().brands.get(positiveInt(v, 'brand', true));
      return { json: brand, text: block(brand) };
    },
  },
  'brand:update': {
    summary: "Change a brand's name, time zone, status (disabled: its keys and devices stop working), receipts (customers' receipt e-mails) or checkout look (colour, support contact; `none` removes one)",
    usage:
      '--brand <id> [--name <name>] [--timezone <IANA zone>] [--status active|disabled] [--receipts on|off] [--color #rrggbb|none] [--support-phone <phone>|none] [--support-email <address>|none]',
    options: {
      brand: { type: 'string' }, name: { type: 'string' }, timezone: { type: 'string' }, status: { type: 'string' }, receipts: { type: 'string' },
      color: { type: 'string' }, 'support-phone': { type: 'string' }, 'support-email': { type: 'string' },
    },
    async run(ctx, v) {
      const id = positiveInt(v, 'brand', true);
      const receipts = oneOf(v, 'receipts', ['on', 'off'] as const);
      const body = defined({
        name: opt(v, 'name'),
        timezone: opt(v, 'timezone'),
        status: oneOf(v, 'status', brandStatuses),
        receipts_enabled: receipts === undefined ? undefined : receipts === 'on',
        primary_color: orNone(opt(v, 'color')),
        support_phone: orNone(opt(v, 'support-phone')),
        support_email: orNone(opt(v, 'support-email')),
      });
      const brand = await ctx.admin().brands.update(id, body);
      return { json: brand, text: block(brand) };
    },
  },
  'brand:logo': {
    summary: "Set a brand's checkout logo from a PNG, JPEG or WebP file (at most 64 KB, 16–2048 px a side; SVG is refused), or remove it",
    usage: '--brand <id> (--file <logo.png> | --remove)',
    options: { brand: { type: 'string' }, file: { type: 'string' }, remove: { type: 'boolean' } },
    async run(ctx, v) {
      const id = positiveInt(v, 'brand', true);
      const file = opt(v, 'file');
      if (v.remove === true) {
        if (file) throw new UsageError('Give --file or --remove, not both');
        const brand = await ctx.admin().brands.deleteLogo(id);
        return { json: brand, text: block(brand) };
      }
      if (!file) throw new UsageError('--file is required (or --remove)');
      let bytes: Buffer;
      try {
        bytes = readFileSync(file);
      } catch (err) {
        throw new UsageError(`--file: cannot read ${file}: ${(err as Error).message}`);
      }
      const logo = await ctx.admin().brands.setLogo(id, { content_base64: bytes.toString('base64') });
      return { json: logo, text: block(logo) };
    },
  },
  'api-key:create': {
    summary: 'Create an API key for a brand (the key is shown once)',
    usage: '--brand <id> --name <what it is for> [--mode live|test] [--dialect native|ownpay] [--scopes read,write,refunds,webhooks] [--expires-at <ISO time>]',
    options: {
      brand: { type: 'string' }, name: { type: 'string' }, mode: { type: 'string' }, dialect: { type: 'string' }, scopes: { type: 'string' }, 'expires-at': { type: 'string' },
    },
    async run(ctx, v) {
      const id = positiveInt(v, 'brand', true);
      const scopes = opt(v, 'scopes')?.split(',').map((s) => s.trim()).filter(Boolean);
      const unknown = scopes?.filter((s) => !(apiKeyScopes as readonly string[]).includes(s)) ?? [];
      if (unknown.length > 0) throw new UsageError(`--scopes: ${unknown.join(', ')} is not one of ${apiKeyScopes.join(', ')}`);
      // `ownpay`: an `op_…` key for OwnPay's plugins and SDKs (README "Coming from OwnPay").
      const body = defined({
        name: need(v, 'name'),
        mode: oneOf(v, 'mode', modes),
        dialect: oneOf(v, 'dialect', apiKeyDialects),
        scopes: scopes as ApiKeyScope[] | undefined,
        expires_at: opt(v, 'expires-at'),
      });
      const key = await ctx.admin().brands.createApiKey(id, body);
      return { json: key, text: `${block(key)}\nStore the key now: it cannot be shown again.` };
    },
  },
  'api-key:list': {
    summary: "List a brand's API keys (prefix, created, last used, revoked; never the key)",
    usage: '--brand <id>',
    options: { brand: { type: 'string' } },
    async run(ctx, v) {
      const keys = await ctx.admin().brands.listApiKeys(positiveInt(v, 'brand', true));
      return { json: keys, text: table(keys, KEY_COLUMNS) };
    },
  },
  'api-key:revoke': {
    summary: 'Revoke an API key (it stops working at once)',
    usage: '--brand <id> --key <key id>',
    options: { brand: { type: 'string' }, key: { type: 'string' } },
    async run(ctx, v) {
      const brand = positiveInt(v, 'brand', true);
      const key = await ctx.admin().brands.revokeApiKey(brand, positiveInt(v, 'key', true));
      return { json: key, text: block(key) };
    },
  },
};
