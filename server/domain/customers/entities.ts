import { defineEntity, p } from '@mikro-orm/core';
import { Brand } from '../brands/entities.ts';

/**
 * A brand's customer. Name, email and phone are stored only as PII-cipher tokens;
 * `emailHash`/`phoneHash` are blind indexes of the normalised values, unique per brand.
 */
export const Customer = defineEntity({
  name: 'Customer',
  tableName: 'customers',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    uuid: p.uuid().unique(),
    brand: () => p.manyToOne(Brand),
    nameEncrypted: p.text().nullable(),
    emailEncrypted: p.text().nullable(),
    phoneEncrypted: p.text().nullable(),
    /** Personal-data format of the row: 1 before binding to row and brand, 2 after (migration 0011, domain/pii/reencrypt.ts). */
    piiV: p.smallint().default(2),
    emailHash: p.string().length(64).nullable(),
    phoneHash: p.string().length(64).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type CustomerEntity = InstanceType<typeof Customer.class>;
