import { z } from 'zod';
import { intQuery } from '../common/index.ts';

/** Every device route lives under this prefix. */
export const DEVICE_PATH_PREFIX = '/api/mobile/v1';

/** Header alternative to the body's `fingerprint`. */
export const FINGERPRINT_HEADER = 'x-device-fingerprint';

export const fingerprintSchema = z
  .string()
  .min(16, 'Must be at least 16 characters')
  .max(256, 'Must be at most 256 characters')
  .regex(/^[\x21-\x7e]+$/, 'Must be printable ASCII without spaces')
  .describe('Hardware fingerprint hash of the phone, as computed by the app. Must stay the same for the life of the pairing.');

export const fingerprintHeaders = z.object({
  [FINGERPRINT_HEADER]: fingerprintSchema.optional().describe('The device fingerprint, when not sent in the body. When both are sent they must be equal.'),
});

/** A positive integer id in a path. */
export const idPathParam = (what: string) => intQuery({ min: 1, description: `Id of the ${what}.` });
