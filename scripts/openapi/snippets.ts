import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { contract } from '../../contract/index.ts';
import { sdkNames } from '../../clients/shared/naming.ts';
import { listRoutes } from '../../clients/shared/resources.ts';

/**
 * Code samples for the reference: `x-codeSamples` per operation (curl, and the
 * Node SDK for merchant routes) and the webhook verification snippets, whose
 * PHP and Python sources live in docs/webhook-verification/ where a test runs them.
 */

type Json = Record<string, any>;

const verificationDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/webhook-verification');
export const verificationSnippet = (file: 'verify_webhook.py' | 'verify_webhook.php') =>
  readFileSync(path.join(verificationDir, file), 'utf8').trimEnd();

const tokenFor: Record<string, string> = {
  merchant: '$PAYCOLLECT_API_KEY',
  device: '$DEVICE_ACCESS_TOKEN',
  admin: '$ADMIN_TOKEN',
  pairing: '$PAIRING_CODE',
};

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** A path with its parameters filled from their examples (or `{name}` kept). */
function concretePath(oasPath: string, params: Json[]): string {
  return oasPath.replace(/\{([^}]+)\}/g, (whole, name: string) => {
    const p = params.find((x) => x.in === 'path' && x.name === name);
    const v = p?.example ?? p?.schema?.examples?.[0];
    return v === undefined ? whole : encodeURIComponent(String(v));
  });
}

export function curlSample(method: string, oasPath: string, op: Json, auth: string, body: unknown): string {
  const params = (op.parameters ?? []) as Json[];
  const lines = [`curl -X ${method.toUpperCase()} "$PAYCOLLECT_URL${concretePath(oasPath, params)}"`];
  if (tokenFor[auth]) lines.push(`-H "Authorization: Bearer ${tokenFor[auth]}"`);
  if (params.some((p) => p.name === 'Idempotency-Key')) lines.push('-H "Idempotency-Key: order-1001"');
  if (body !== undefined) lines.push(`-H 'Content-Type: application/json'`, `-d ${shellQuote(JSON.stringify(body))}`);
  return lines.join(' \\\n  ');
}

/**
 * The merchant SDK mirrors the contract: `client.<resource>.<operation>(...pathParams, bodyOrQuery?, options?)`,
 * so the call is derived from the contract key the same way.
 */
// The merchant SDK's method names (payments.retrieve, webhookEndpoints.update...), derived as the SDK derives them.
const merchantSdkNames = sdkNames(listRoutes(contract.merchant));

export function nodeSample(key: string[], op: Json, body: unknown): string {
  const method = merchantSdkNames.get(key.join('.'))?.name ?? key.join('.');
  const params = (op.parameters ?? []) as Json[];
  const pathArgs = params.filter((p) => p.in === 'path').map((p) => JSON.stringify(p.example ?? p.schema?.examples?.[0] ?? p.name));
  const args = [...pathArgs];
  if (body !== undefined) args.push(JSON.stringify(body, null, 2).replace(/\n/g, '\n'));
  const idempotent = params.some((p) => p.name === 'Idempotency-Key');
  if (idempotent) args.push("{ idempotencyKey: 'order-1001' }");
  return [
    "import { PaycollectMerchant } from '@paycollect/merchant';",
    '',
    'const paycollect = new PaycollectMerchant({ apiKey: process.env.PAYCOLLECT_API_KEY!, baseUrl: process.env.PAYCOLLECT_URL! });',
    `const result = await paycollect.${method}(${args.join(', ')});`,
  ].join('\n');
}

export function webhookVerificationMarkdown(): string {
  return [
    'Every delivery carries `X-Webhook-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]`: HMAC-SHA256 of `{t}.{raw body}` keyed with the whole `whsec_…` secret, one `v1` per active secret (two during a rotation). Verify it on the raw body before trusting anything, reject timestamps more than 5 minutes away, deduplicate on `X-Webhook-Id`, and answer 2xx quickly.',
    '',
    'Node: the merchant SDK does it: `paycollect.webhooks.constructEvent(rawBody, req.headers, secret)`.',
    '',
    'PHP:',
    '',
    '```php',
    verificationSnippet('verify_webhook.php'),
    '```',
    '',
    'Python:',
    '',
    '```python',
    verificationSnippet('verify_webhook.py'),
    '```',
  ].join('\n');
}
