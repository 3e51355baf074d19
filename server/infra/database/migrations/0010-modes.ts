import { Migration } from '@mikro-orm/migrations';

/**
 * Test and live mode (SECURITY.md "Modes"): every payment object belongs to
 * exactly one mode, stored in a NOT NULL `mode` column.
 *
 * Roots (api keys, intents, customers, devices, pairing codes, events, outbound
 * SMS) are given their mode by the code that creates them;
 * their column default `live` only keeps writers that predate modes doing what
 * they did before. Children take their parent's mode in a trigger, whatever the
 * INSERT says, so a transaction can never be in another mode than its intent, a
 * refund than its transaction, an SMS record or notification than its device,
 * a delivery than its event. A mode never changes once written.
 *
 * Existing rows: an API key's mode was already written in its prefix. A brand
 * whose keys are all test keys only ever acted in test mode, so all its rows
 * are test. Elsewhere rows stay live, except payments paid only on the sandbox
 * (automatic) gateway, which moved no money: those intents, their transactions,
 * refunds and events become test.
 */
export class Migration0010Modes extends Migration {
  override name = '0010-modes';

  override up(): void {
    const modeCheck = (table: string) => `ALTER TABLE ${table} ADD CONSTRAINT ${table}_mode_check CHECK (mode IN ('live', 'test'))`;
    const testOnlyBrands = `(SELECT brand_id FROM api_keys GROUP BY brand_id HAVING bool_and(mode = 'test'))`;

    this.addSql(`ALTER TABLE api_keys ADD COLUMN mode text NOT NULL DEFAULT 'live'`);
    this.addSql(`UPDATE api_keys SET mode = 'test' WHERE prefix LIKE 'pk\\_test\\_%' OR prefix LIKE 'sk\\_test\\_%'`);

    for (const table of ['api_keys', 'payment_intents', 'customers', 'devices', 'pairing_codes', 'webhook_events', 'outbound_sms',
      'transactions', 'refunds', 'webhook_deliveries', 'sms_records', 'notifications']) {
      if (table !== 'api_keys') this.addSql(`ALTER TABLE ${table} ADD COLUMN mode text NOT NULL DEFAULT 'live'`);
      this.addSql(modeCheck(table));
    }

    // Backfill, roots first.
    this.addSql(`UPDATE payment_intents i SET mode = 'test'
      WHERE i.brand_id IN ${testOnlyBrands}
         OR (EXISTS (SELECT 1 FROM transactions t JOIN gateways g ON g.id = t.gateway_id WHERE t.intent_id = i.id AND g.type = 'automatic')
             AND NOT EXISTS (SELECT 1 FROM transactions t JOIN gateways g ON g.id = t.gateway_id WHERE t.intent_id = i.id AND g.type <> 'automatic'))`);
    for (const table of ['customers', 'devices', 'pairing_codes']) {
      this.addSql(`UPDATE ${table} SET mode = 'test' WHERE brand_id IN ${testOnlyBrands}`);
    }
    this.addSql(`UPDATE transactions t SET mode = i.mode FROM payment_intents i WHERE i.id = t.intent_id AND t.mode <> i.mode`);
    this.addSql(`UPDATE refunds r SET mode = t.mode FROM transactions t WHERE t.id = r.transaction_id AND r.mode <> t.mode`);
    this.addSql(`UPDATE sms_records r SET mode = d.mode FROM devices d WHERE d.id = r.device_id AND r.mode <> d.mode`);
    this.addSql(`UPDATE notifications n SET mode = d.mode FROM devices d WHERE d.id = n.device_id AND n.mode <> d.mode`);
    this.addSql(`UPDATE outbound_sms o SET mode = 'test' WHERE (o.device_id IS NULL AND o.brand_id IN ${testOnlyBrands})
      OR o.device_id IN (SELECT id FROM devices WHERE mode = 'test')`);
    // Events: by their transaction, else by the payment or device their payload names, else by the brand.
    this.addSql(`UPDATE webhook_events e SET mode = COALESCE(
        (SELECT t.mode FROM transactions t WHERE t.id = e.transaction_id),
        (SELECT i.mode FROM payment_intents i WHERE i.uuid::text = (e.payload::jsonb -> 'data' ->> 'payment_id')),
        (SELECT d.mode FROM devices d WHERE d.uuid::text = (e.payload::jsonb -> 'data' ->> 'device_uuid')),
        CASE WHEN e.brand_id IN ${testOnlyBrands} THEN 'test' ELSE 'live' END)`);
    this.addSql(`UPDATE webhook_deliveries w SET mode = e.mode FROM webhook_events e WHERE e.id = w.event_id AND w.mode <> e.mode`);

    // Test events (POST /api/v1/webhooks/tests) change nothing; the delivery log says which they are.
    this.addSql('ALTER TABLE webhook_events ADD COLUMN is_test boolean NOT NULL DEFAULT false');

    // Children follow their parent, whatever the INSERT said.
    // `optional`: the reference may be null or (webhook_events.transaction_id has
    // no foreign key) name no row; then the mode the INSERT gave stands.
    const inherit = (table: string, parent: string, fk: string, optional: boolean) => {
      const fn = `${table}_inherit_mode`;
      this.addSql(`
        CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE parent_mode text;
        BEGIN
          IF NEW.${fk} IS NULL THEN RETURN NEW; END IF;
          SELECT p.mode INTO parent_mode FROM ${parent} p WHERE p.id = NEW.${fk};
          IF FOUND THEN NEW.mode := parent_mode;
          ${optional ? '' : `ELSE RAISE EXCEPTION '% % not found', '${parent}', NEW.${fk} USING ERRCODE = 'foreign_key_violation';`}
          END IF;
          RETURN NEW;
        END $$`);
      this.addSql(`CREATE TRIGGER ${fn} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
    };
    inherit('transactions', 'payment_intents', 'intent_id', false);
    inherit('refunds', 'transactions', 'transaction_id', false);
    inherit('webhook_deliveries', 'webhook_events', 'event_id', false);
    inherit('sms_records', 'devices', 'device_id', false);
    inherit('notifications', 'devices', 'device_id', false);
    inherit('outbound_sms', 'devices', 'device_id', true);
    inherit('webhook_events', 'transactions', 'transaction_id', true);

    this.addSql(`
      CREATE FUNCTION mode_is_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'the mode of a % row never changes', TG_TABLE_NAME USING ERRCODE = 'check_violation';
      END $$`);
    for (const table of ['api_keys', 'payment_intents', 'customers', 'devices', 'pairing_codes', 'webhook_events', 'outbound_sms',
      'transactions', 'refunds', 'webhook_deliveries', 'sms_records', 'notifications']) {
      this.addSql(`CREATE TRIGGER ${table}_mode_immutable BEFORE UPDATE OF mode ON ${table} FOR EACH ROW WHEN (OLD.mode IS DISTINCT FROM NEW.mode) EXECUTE FUNCTION mode_is_immutable()`);
    }

    // Uniqueness that was per brand is per brand and mode: a test customer or a
    // test SMS must not collide with (or pre-empt) a live one.
    this.addSql('DROP INDEX customers_brand_email_hash_uniq');
    this.addSql('DROP INDEX customers_brand_phone_hash_uniq');
    this.addSql('CREATE UNIQUE INDEX customers_brand_mode_email_hash_uniq ON customers (brand_id, mode, email_hash) WHERE email_hash IS NOT NULL');
    this.addSql('CREATE UNIQUE INDEX customers_brand_mode_phone_hash_uniq ON customers (brand_id, mode, phone_hash) WHERE phone_hash IS NOT NULL');
    this.addSql('DROP INDEX sms_records_brand_content_original_idx');
    this.addSql('CREATE UNIQUE INDEX sms_records_brand_mode_content_original_idx ON sms_records (brand_id, mode, content_hash) WHERE duplicate_of_id IS NULL');

    // Merchant lists read one mode of one brand.
    this.addSql('CREATE INDEX payment_intents_brand_mode_created_idx ON payment_intents (brand_id, mode, created_at DESC)');
    this.addSql('CREATE INDEX refunds_brand_mode_created_idx ON refunds (brand_id, mode, created_at DESC, id DESC)');
    this.addSql('CREATE INDEX customers_brand_mode_created_idx ON customers (brand_id, mode, created_at DESC, id DESC)');
    this.addSql('CREATE INDEX webhook_deliveries_brand_mode_recent_idx ON webhook_deliveries (brand_id, mode, created_at DESC, id DESC)');
  }
}
