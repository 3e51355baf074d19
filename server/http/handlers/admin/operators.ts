import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { createOperator, listOperators, resetOperatorPassword, updateOperator } from '../../../domain/operators/service.ts';
import { adminActor } from './actor.ts';

const s = initServer();

export const adminOperatorHandlers = s.router(contract.admin.operators, {
  list: async ({ req }) => ({ status: 200, body: { success: true, data: await listOperators(req.db) } }),
  create: async ({ req, body }) => {
    const created = await createOperator(req.db, adminActor(req), { email: body.email, name: body.name, role: body.role, brandIds: body.brand_ids });
    return { status: 201, body: { success: true, data: created } };
  },
  update: async ({ req, params, body }) => {
    const op = await updateOperator(req.db, adminActor(req), params.operator_id, { name: body.name, role: body.role, brandIds: body.brand_ids, disabled: body.disabled });
    return { status: 200, body: { success: true, data: op } };
  },
  resetPassword: async ({ req, params }) => {
    return { status: 200, body: { success: true, data: await resetOperatorPassword(req.db, adminActor(req), params.operator_id) } };
  },
});
