import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import type { Permission, RouteMeta } from '../common/meta.ts';

/** One permission per route of a router, nested like the router (a missing route is a compile error). */
export type PermissionTable<R> = { [K in keyof R]: R[K] extends AppRoute ? Permission : PermissionTable<R[K]> };

/**
 * The role matrix of the admin API in one place, so it is reviewed as a whole:
 * `read` (viewer and up), `operate` (operator and up: the day-to-day work on
 * payments, SMS evidence, devices, deliveries and refunds), `own` (owner only:
 * brands, API keys, gateways and templates, wallet accounts, filter rules, exchange rates,
 * settings, alert settings, operators), `self` (any signed-in operator, on
 * their own account). Every admin route must appear here: adding a route
 * without deciding who may call it does not compile.
 */
export const adminPermissions = {
  overview: { get: 'read' },
  brands: { create: 'own', list: 'read', get: 'read', update: 'own', setLogo: 'own', deleteLogo: 'own', createApiKey: 'own', listApiKeys: 'own', listWebhookEndpoints: 'read', setWebhookEndpointSigning: 'own', revokeApiKey: 'own' },
  gateways: { create: 'own', presets: 'read', list: 'read', get: 'read', update: 'own', listFormatAlarms: 'read', evaluateTemplates: 'own' },
  walletAccounts: { list: 'read', get: 'read', create: 'own', update: 'own', delete: 'own' },
  // Exporting hands out every customer's personal data in clear: owners only.
  customers: { list: 'read', create: 'operate', update: 'operate', delete: 'operate', import: 'operate', export: 'own' },
  exchangeRates: { set: 'own', list: 'read', delete: 'own' },
  filterRules: { get: 'read', update: 'own' },
  devices: { list: 'read', get: 'read', presenceHistory: 'read', revoke: 'operate' },
  pairingCodes: { create: 'operate' },
  notifications: { send: 'operate' },
  outboundSms: { enqueue: 'operate' },
  transactions: { list: 'read', get: 'read', timeline: 'read', verify: 'operate', reject: 'operate' },
  smsRecords: { list: 'read', get: 'read', dismiss: 'operate' },
  payments: { listUnpaid: 'read' },
  refunds: { list: 'read', get: 'read', complete: 'operate', fail: 'operate' },
  invoices: { list: 'read', get: 'read', void: 'operate', resend: 'operate' },
  webhookDeliveries: { list: 'read', get: 'read', replay: 'operate', sendTest: 'operate', replayDeadLetters: 'operate' },
  settings: { get: 'read', update: 'own' },
  auditLog: { list: 'read' },
  recovery: { pasteSms: 'operate', requestBackfill: 'operate', listBackfillRequests: 'read' },
  smsCompleteness: { get: 'read', list: 'read' },
  reconciliation: { upload: 'operate', list: 'read', get: 'read', downloadCsv: 'read' },
  alerts: { list: 'read', getSettings: 'read', putSettings: 'own' },
  session: { login: 'self', get: 'self', logout: 'self', changePassword: 'self', startTotp: 'self', confirmTotp: 'self', disableTotp: 'self' },
  operators: { list: 'own', create: 'own', update: 'own', resetPassword: 'own' },
} as const;

/** A copy of `router` whose routes carry their `permission` from `table` (new objects; the inputs are not changed). */
export function withPermissions<R extends AppRouter>(router: R, table: PermissionTable<R>): R {
  const out: Record<string, unknown> = {};
  for (const [key, node] of Object.entries(router)) {
    const permission = (table as Record<string, unknown>)[key];
    if (permission === undefined) throw new Error(`admin route ${key} has no permission`);
    out[key] = isAppRoute(node as AppRoute | AppRouter)
      ? { ...(node as AppRoute), metadata: { ...((node as AppRoute).metadata as RouteMeta), permission } }
      : withPermissions(node as AppRouter, permission as PermissionTable<AppRouter>);
  }
  return out as R;
}
