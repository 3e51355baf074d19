import { randomBytes } from 'node:crypto';
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { writePrivateFile } from './private-file.ts';
import { generateKeyMaterial } from './crypto/pii-cipher.ts';

/**
 * The service's secrets. Each comes from its environment variable when set;
 * otherwise it is generated once and kept in DATA_DIR/secrets.json (mode 0600),
 * so a fresh machine runs with no hand-made `.env` and restarts keep working
 * (encrypted customer data stays readable, paired devices stay paired).
 * Keys never live in the database.
 */
export interface Secrets {
  adminToken: string;
  jwtAccessSecret: string;
  jwtRefreshSecret: string;
  /** Hex-encoded HMAC key for blind indexes (at least 32 bytes). */
  blindIndexKey: string;
  /** Keyring spec `id:base64key[,id:base64key…]`; the first key encrypts. */
  piiEncryptionKeys: string;
  sandboxCallbackSecret: string;
  /** Password of the embedded PostgreSQL superuser (unused with DATABASE_URL). */
  embeddedDbPassword: string;
  /** Password of the embedded cluster's application role, the one the service connects as. */
  embeddedDbAppPassword: string;
}

type Stored = Partial<Secrets>;

const generators: { [K in keyof Secrets]: () => string } = {
  adminToken: () => `adm_${randomBytes(32).toString('base64url')}`,
  jwtAccessSecret: () => randomBytes(48).toString('base64url'),
  jwtRefreshSecret: () => randomBytes(48).toString('base64url'),
  blindIndexKey: () => randomBytes(32).toString('hex'),
  piiEncryptionKeys: () => `k1:${generateKeyMaterial()}`,
  sandboxCallbackSecret: () => randomBytes(32).toString('base64url'),
  embeddedDbPassword: () => randomBytes(24).toString('base64url'),
  embeddedDbAppPassword: () => randomBytes(24).toString('base64url'),
};

const fromEnv = (c: Config): Partial<Secrets> => ({
  adminToken: c.ADMIN_TOKEN,
  jwtAccessSecret: c.JWT_ACCESS_SECRET,
  jwtRefreshSecret: c.JWT_REFRESH_SECRET,
  blindIndexKey: c.BLIND_INDEX_KEY,
  piiEncryptionKeys: c.PII_ENCRYPTION_KEYS,
  sandboxCallbackSecret: c.SANDBOX_CALLBACK_SECRET,
});

function secretsFile(config: Config): string {
  return path.resolve(config.DATA_DIR, 'secrets.json');
}

/** Returns the secrets and which ones were generated just now. */
export function loadSecrets(config: Config): { secrets: Secrets; generated: Array<keyof Secrets> } {
  const file = secretsFile(config);
  const stored: Stored = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Stored) : {};
  const env = fromEnv(config);
  const generated: Array<keyof Secrets> = [];
  const out = {} as Secrets;
  for (const key of Object.keys(generators) as Array<keyof Secrets>) {
    const value = env[key] ?? stored[key];
    if (value) {
      out[key] = value;
    } else {
      out[key] = generators[key]();
      stored[key] = out[key];
      generated.push(key);
    }
  }
  // Atomic: a crash while writing must not leave a truncated file (the keys of encrypted data are in it).
  if (generated.length > 0) writePrivateFile(file, `${JSON.stringify(stored, null, 2)}\n`);
  return { secrets: Object.freeze(out), generated };
}
