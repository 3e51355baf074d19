import { PiiCipher, parseKeyring } from '../../infra/crypto/pii-cipher.ts';
import type { Secrets } from '../../infra/secrets.ts';

/** The keys personal data is protected with; built once at start-up, never stored or logged. */
export interface PersonalDataKeys {
  pii: PiiCipher;
  blindIndexKey: Buffer;
}

/**
 * Parses the configured keyring and blind index key. Fails start-up with a message
 * naming the variable (never its value) when either is malformed.
 */
export function loadPersonalDataKeys(secrets: Pick<Secrets, 'piiEncryptionKeys' | 'blindIndexKey'>): PersonalDataKeys {
  const pii = new PiiCipher(parseKeyring(secrets.piiEncryptionKeys));
  const hex = secrets.blindIndexKey.trim();
  if (!/^(?:[0-9a-fA-F]{2}){32,}$/.test(hex)) {
    throw new Error('BLIND_INDEX_KEY must be hex encoding at least 32 bytes');
  }
  return { pii, blindIndexKey: Buffer.from(hex, 'hex') };
}
