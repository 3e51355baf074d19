import { defineEntity, p } from '@mikro-orm/core';
import { modes } from '../../../contract/vocabulary.ts';
import { Brand } from '../brands/entities.ts';

/**
 * A brand's customer, per mode. Name, email and phone are stored only as
 * PII-cipher tokens; `emailHash`/`phoneHash` are blind indexes of the
 * normalised values, unique per brand and mode. Mirrors migrations 0003, 0010
 * 0011 and 0048 (the mode-immutable trigger stays in the migrations).
 */
export const Customer = defineEntity({
  name: 'Customer',
  tableName: 'customers',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    uuid: p.uuid().unique('customers_uuid_key'),
    brand: () => p.manyToOne(Brand).foreignKeyName('customers_brand_id_fkey').deleteRule('no action').updateRule('no action'),
    mode: p.enum(modes).default('live'),
    nameEncrypted: p.text().nullable(),
    emailEncrypted: p.text().nullable(),
    phoneEncrypted: p.text().nullable(),
    /** Personal-data format of the row: 1 before binding to row and brand, 2 after (migration 0011, domain/pii/reencrypt.ts). */
    piiV: p.smallint().default(2).check('pii_v IN (1, 2)'),
    emailHash: p.string().columnType('char(64)').nullable(),
    phoneHash: p.string().columnType('char(64)').nullable(),
    createdAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()).onUpdate(() => new Date()),
    /** When the customer was deleted: the row stays for the payments naming it, its personal data erased (migration 0048). */
    erasedAt: p.datetime().nullable(),
  },
  checks: [
    { name: 'customers_check', expression: '(email_hash IS NULL) = (email_encrypted IS NULL)' },
    { name: 'customers_check1', expression: '(phone_hash IS NULL) = (phone_encrypted IS NULL)' },
    {
      name: 'customers_erased_check',
      expression: 'erased_at IS NULL OR (name_encrypted IS NULL AND email_encrypted IS NULL AND phone_encrypted IS NULL)',
    },
  ],
  uniques: [
    { name: 'customers_brand_mode_email_hash_uniq', properties: ['brand', 'mode', 'emailHash'], where: 'email_hash IS NOT NULL' },
    { name: 'customers_brand_mode_phone_hash_uniq', properties: ['brand', 'mode', 'phoneHash'], where: 'phone_hash IS NOT NULL' },
  ],
  indexes: [
    { name: 'customers_brand_created_idx', expression: 'CREATE INDEX customers_brand_created_idx ON customers (brand_id, created_at DESC, id DESC)' },
    {
      name: 'customers_brand_mode_created_idx',
      expression: 'CREATE INDEX customers_brand_mode_created_idx ON customers (brand_id, mode, created_at DESC, id DESC)',
    },
    // Rows still in the first personal-data format (domain/pii/reencrypt.ts).
    { name: 'customers_pii_v1_idx', properties: ['id'], where: 'pii_v = 1' },
  ],
});

