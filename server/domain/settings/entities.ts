import { defineEntity, p } from '@mikro-orm/core';

/** One service-wide setting (see service.ts: every key has a schema and a default there). */
export const Setting = defineEntity({
  name: 'Setting',
  tableName: 'settings',
  properties: {
    key: p.string().length(100).primary(),
    value: p.json<unknown>(),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
