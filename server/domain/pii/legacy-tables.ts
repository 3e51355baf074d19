import type { PiiBinding } from '../../infra/crypto/pii-cipher.ts';
import { type Db } from '../db.ts';
import { oldCustomers, oldNotifications, oldOutboundSms, oldSmsRecords, oldTransactions } from './queries.ts';
import { blindIndex } from '../../infra/crypto/blind-index.ts';
import { CUSTOMER_CONTEXT, customerBinding } from '../customers/service.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import { NOTIFICATION_CONTEXT, notificationBinding } from '../notifications/service.ts';
import { OUTBOUND_MESSAGE_CONTEXT, OUTBOUND_PHONE_CONTEXT, outboundBinding } from '../outbound-sms/service.ts';
import { TRANSACTION_SENDER_CONTEXT, transactionBinding } from '../payments/transactions.ts';
import { smsContentHash } from '../sms/index.ts';
import { SMS_RECORD_CONTEXT, smsRowBinding } from '../sms/index.ts';

/** How one value of an old row is read. */
export interface Reader {
  /**
   * The plaintext of an unbound `v1` token; null for NULL, and for a value that
   * cannot be read (corrupt: it is then left as it is, refused on every read,
   * and counted). A key missing from configuration stops the run instead.
   */
  token(value: string | null, context: string): string | null;
}

/** One table's rows in the old format (`pii_v = 1`), and how each becomes the new one. */
export interface LegacyTable<R extends { id: number } = { id: number }> {
  table: string;
  /** The next batch of old rows, locked, in id order. */
  select(tx: Db, batchSize: number): Promise<R[]>;
  /** The new values of the row's columns (`pii_v` is set by the caller). */
  rewrite(row: R, read: Reader, keys: PersonalDataKeys): Record<string, string | null>;
}

/** Each table's row type is checked against its own rewrite; the list holds them as LegacyTable. */
const legacyTable = <R extends { id: number }>(spec: LegacyTable<R>): LegacyTable => spec;

/** The bound token of `plain`; the stored value unchanged when there is no plaintext (NULL, or unreadable). */
function seal(keys: PersonalDataKeys, plain: string | null, stored: string | null, context: string, binding: PiiBinding): string | null {
  return plain === null ? stored : keys.pii.encrypt(plain, context, binding);
}


/** Every table with personal data; the order does not matter (no value depends on another table's). */
export const legacyTables: readonly LegacyTable[] = [
  legacyTable({
    table: 'customers',
    select: oldCustomers,
    rewrite(r, read, keys) {
      const b = customerBinding(r.brand_id, r.uuid);
      const name = read.token(r.name_encrypted, CUSTOMER_CONTEXT.name);
      const email = read.token(r.email_encrypted, CUSTOMER_CONTEXT.email);
      const phone = read.token(r.phone_encrypted, CUSTOMER_CONTEXT.phone);
      // Stored values were normalised before encryption, so the index is of the same text lookups hash.
      return {
        name_encrypted: seal(keys, name, r.name_encrypted, CUSTOMER_CONTEXT.name, b),
        email_encrypted: seal(keys, email, r.email_encrypted, CUSTOMER_CONTEXT.email, b),
        phone_encrypted: seal(keys, phone, r.phone_encrypted, CUSTOMER_CONTEXT.phone, b),
        email_hash: email === null ? r.email_hash : blindIndex(keys.blindIndexKey, r.brand_id, 'email', email),
        phone_hash: phone === null ? r.phone_hash : blindIndex(keys.blindIndexKey, r.brand_id, 'phone', phone),
      };
    },
  }),
  legacyTable({
    table: 'sms_records',
    select: oldSmsRecords,
    rewrite(r, read, keys) {
      const b = smsRowBinding(r);
      // The sender was stored in clear.
      const sender = r.sender;
      const body = read.token(r.body_encrypted, SMS_RECORD_CONTEXT.body);
      const senderNumber = read.token(r.parsed_sender_number, SMS_RECORD_CONTEXT.senderNumber);
      return {
        sender: seal(keys, sender, r.sender, SMS_RECORD_CONTEXT.sender, b),
        body_encrypted: seal(keys, body, r.body_encrypted, SMS_RECORD_CONTEXT.body, b),
        parsed_sender_number: seal(keys, senderNumber, r.parsed_sender_number, SMS_RECORD_CONTEXT.senderNumber, b),
        content_hash: body === null || sender === null ? r.content_hash : smsContentHash(keys.blindIndexKey, r.brand_id, sender, body),
      };
    },
  }),
  legacyTable({
    table: 'notifications',
    select: oldNotifications,
    rewrite(r, _read, keys) {
      // Title and body were stored in clear.
      const b = notificationBinding(r.brand_id, r.id);
      return { title: seal(keys, r.title, r.title, NOTIFICATION_CONTEXT.title, b), body: seal(keys, r.body, r.body, NOTIFICATION_CONTEXT.body, b) };
    },
  }),
  legacyTable({
    table: 'outbound_sms',
    select: oldOutboundSms,
    rewrite(r, read, keys) {
      const b = outboundBinding(r.brand_id, r.id);
      return {
        phone_encrypted: seal(keys, read.token(r.phone_encrypted, OUTBOUND_PHONE_CONTEXT), r.phone_encrypted, OUTBOUND_PHONE_CONTEXT, b),
        message_encrypted: seal(keys, read.token(r.message_encrypted, OUTBOUND_MESSAGE_CONTEXT), r.message_encrypted, OUTBOUND_MESSAGE_CONTEXT, b),
      };
    },
  }),
  legacyTable({
    table: 'transactions',
    select: oldTransactions,
    rewrite(r, read, keys) {
      const b = transactionBinding(r.brand_id, r.trx_id);
      const sender = read.token(r.sender_number_encrypted, TRANSACTION_SENDER_CONTEXT);
      return { sender_number_encrypted: seal(keys, sender, r.sender_number_encrypted, TRANSACTION_SENDER_CONTEXT, b) };
    },
  }),
];
