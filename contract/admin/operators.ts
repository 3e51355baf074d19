import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { nameText, ok, uuidSchema } from '../common/index.ts';
import { operatorEmailSchema, operatorRoleSchema, operatorSchema } from './session.ts';
import { adminMeta, adminRouterOptions } from './shared.ts';

const c = initContract();

const brandIds = z
  .array(z.number().int().min(1))
  .max(1000)
  .nullable()
  .describe('Brands the operator sees and acts on; `null` or absent: every brand. Owners always see every brand.');

const withPassword = z
  .object({
    operator: operatorSchema,
    password: z.string().describe('A generated password, shown once: hand it to the operator, who should change it.'),
  })
  .meta({ id: 'AdminOperatorWithPassword' });

const operatorPath = z.object({ operator_id: uuidSchema.describe('Id of the operator.') });

/** Console operators (owner only): who may log in to the console, with which role and brands. */
export const adminOperatorsContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/operators',
      summary: 'List console operators',
      description: 'Every console operator, oldest first, with role, brands and two-factor state. Never a password or TOTP secret.',
      responses: { 200: ok(z.array(operatorSchema)) },
      metadata: adminMeta('Operators'),
    },
    create: {
      method: 'POST',
      path: '/operators',
      summary: 'Add a console operator',
      description: 'Creates the operator with a generated password, returned once. Every id in `brand_ids` must name an existing brand (a 400 naming `brand_ids` otherwise; ignored for owners). Audited as `operator.create`.',
      body: z
        .strictObject({
          email: operatorEmailSchema,
          name: nameText(100),
          role: operatorRoleSchema,
          brand_ids: brandIds.optional(),
        })
        .meta({ id: 'AdminCreateOperatorRequest' }),
      responses: { 201: ok(withPassword) },
      metadata: adminMeta('Operators', ['OPERATOR_EMAIL_TAKEN']),
    },
    update: {
      method: 'PATCH',
      path: '/operators/:operator_id',
      summary: 'Change an operator',
      description: 'Name, role, brands, or `disabled` (which also ends their sessions; so does a change of role or brands). Every id in `brand_ids` must name an existing brand (a 400 naming `brand_ids` otherwise). The last active owner cannot be demoted or disabled (`LAST_OWNER`). Audited as `operator.update`.',
      pathParams: operatorPath,
      body: z
        .strictObject({
          name: nameText(100).optional(),
          role: operatorRoleSchema.optional(),
          brand_ids: brandIds.optional(),
          disabled: z.boolean().optional(),
        })
        .refine((b) => Object.keys(b).length > 0, 'Give at least one field to change')
        .meta({ id: 'AdminUpdateOperatorRequest' }),
      responses: { 200: ok(operatorSchema) },
      metadata: adminMeta('Operators', ['OPERATOR_NOT_FOUND', 'LAST_OWNER']),
    },
    resetPassword: {
      method: 'POST',
      path: '/operators/:operator_id/password-reset',
      summary: "Reset an operator's password",
      description: 'A new generated password, returned once; ends their sessions, clears a lock-out. Audited as `operator.password_reset`.',
      pathParams: operatorPath,
      body: c.noBody(),
      responses: { 200: ok(withPassword) },
      metadata: adminMeta('Operators', ['OPERATOR_NOT_FOUND']),
    },
  },
  adminRouterOptions,
);
