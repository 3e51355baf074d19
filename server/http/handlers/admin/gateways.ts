import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { createGatewayAudited, updateGatewayAudited } from '../../../domain/gateways/admin.ts';
import { getGateway, listGateways, type GatewayView } from '../../../domain/gateways/service.ts';
import { GATEWAY_PRESETS } from '../../../domain/sms/wording.ts';
import type { AppDeps } from '../../../deps.ts';
import { evaluateTemplates } from '../../../domain/sms/index.ts';
import { listFormatAlarms } from '../../../domain/sms/index.ts';
import { adminActor } from './actor.ts';
import { brandScopeOf, inScope } from '../../brand-scope.ts';

const s = initServer();

function gatewayBody(g: GatewayView) {
  return {
    id: g.id,
    code: g.code,
    name: g.name,
    type: g.type,
    methods: g.methods,
    currencies: g.currencies,
    min_amount: g.minAmount,
    max_amount: g.maxAmount,
    review_above: g.reviewAbove,
    fee_percent: g.feePercent,
    fee_fixed: g.feeFixed,
    fee_payer: g.feePayer,
    receiving_account: g.receivingAccount,
    instructions: g.instructions,
    enabled: g.enabled,
    sms_senders: g.smsSenders,
    sms_templates: g.smsTemplates.map((t) => ({ pattern: t.pattern, flags: t.flags ?? '', direction: t.direction ?? ('in' as const), kind: t.kind ?? null })),
    sort_order: g.sortOrder,
    created_at: g.createdAt.toISOString(),
    updated_at: g.updatedAt.toISOString(),
  };
}

export const adminGatewayHandlers = (deps: AppDeps) => s.router(contract.admin.gateways, {
  create: async ({ req, body }) => {
    const g = await createGatewayAudited(req.db, adminActor(req), body);
    return { status: 201, body: { success: true, data: gatewayBody(g) } };
  },
  presets: async () => {
    const data = GATEWAY_PRESETS.map((p) => ({ code: p.code, name: p.name, senders: [...p.senders], templates: p.templates.map((t) => ({ ...t })) }));
    return { status: 200, body: { success: true, data } };
  },
  list: async ({ req }) => {
    return { status: 200, body: { success: true, data: (await listGateways(req.db)).map(gatewayBody) } };
  },
  get: async ({ req, params }) => {
    return { status: 200, body: { success: true, data: gatewayBody(await getGateway(req.db, params.code)) } };
  },
  update: async ({ req, params, body }) => {
    const { confirm_regressions: confirmRegressions, ...patch } = body;
    const g = await updateGatewayAudited(req.db, adminActor(req), params.code, patch, { cipher: deps.crypto.pii, confirmRegressions });
    return { status: 200, body: { success: true, data: gatewayBody(g) } };
  },
  listFormatAlarms: async ({ req, query }) => {
    const open = query.open === undefined ? undefined : query.open === 'true';
    const scope = brandScopeOf(req.principal);
    const alarms = await listFormatAlarms(req.db, { brandId: query.brand_id, open });
    return { status: 200, body: { success: true, data: alarms.filter((a) => inScope(scope, a.brand_id)) } };
  },
  evaluateTemplates: async ({ req, params, body }) => {
    return { status: 200, body: { success: true, data: await evaluateTemplates(req.db, deps.crypto.pii, adminActor(req), params.code, body ?? {}, brandScopeOf(req.principal)) } };
  },
});
