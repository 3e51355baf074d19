import { randomBytes } from 'node:crypto';
import { loadPersonalDataKeys, type PersonalDataKeys } from '../../server/domain/customers/keys.ts';
import { deviceTokenKeys, type DeviceTokenKeys } from '../../server/domain/devices/tokens.ts';

/**
 * One set of secrets per benchmark run, handed to every process as the
 * environment variables the service reads: the seeder encrypts customers with
 * the keys the servers decrypt them with, and signs device tokens both accept.
 */
export interface BenchSecrets {
  env: Record<string, string>;
  keys: PersonalDataKeys;
  jwt: DeviceTokenKeys;
}

export function benchSecrets(): BenchSecrets {
  const env = {
    ADMIN_TOKEN: `adm_${randomBytes(32).toString('base64url')}`,
    JWT_ACCESS_SECRET: randomBytes(48).toString('base64url'),
    JWT_REFRESH_SECRET: randomBytes(48).toString('base64url'),
    BLIND_INDEX_KEY: randomBytes(32).toString('hex'),
    PII_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    SANDBOX_CALLBACK_SECRET: randomBytes(32).toString('base64url'),
  };
  return {
    env,
    keys: loadPersonalDataKeys({ piiEncryptionKeys: env.PII_ENCRYPTION_KEYS, blindIndexKey: env.BLIND_INDEX_KEY }),
    jwt: deviceTokenKeys({ jwtAccessSecret: env.JWT_ACCESS_SECRET, jwtRefreshSecret: env.JWT_REFRESH_SECRET }),
  };
}
