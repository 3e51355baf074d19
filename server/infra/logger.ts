import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/**
 * Keys whose values never reach a log line, at any depth we log: credentials,
 * secrets, personal data and SMS content. Handlers log ids and codes, not
 * bodies; this list is the safety net for the day someone logs an object whole.
 */
const SENSITIVE_KEYS = [
  'authorization',
  'cookie',
  'x-device-fingerprint',
  'password',
  'secret',
  'token',
  'access_token',
  'refresh_token',
  'api_key',
  'admin_token',
  'pairing_code',
  'fingerprint',
  'email',
  'phone',
  'name',
  'body',
  'sender_number',
];

const redactPaths = SENSITIVE_KEYS.flatMap((k) => {
  const key = /^[a-z_]+$/.test(k) ? k : `["${k}"]`;
  const dotted = key.startsWith('[') ? key : `.${key}`;
  return [key.startsWith('[') ? `*${key}` : `*${dotted}`, key.startsWith('[') ? `*.*${key}` : `*.*${dotted}`, k.includes('-') ? `["${k}"]` : k];
});

export function createLogger(opts: { level: string; destination?: DestinationStream }): Logger {
  return pino(
    {
      level: opts.level,
      base: { service: 'paycollect' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: redactPaths, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    opts.destination,
  );
}
