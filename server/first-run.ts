import type { Runtime } from './bootstrap.ts';
import { Brand } from './domain/brands/entities.ts';
import { createApiKey, createBrand } from './domain/brands/service.ts';
import { createPairingCode } from './domain/devices/pairing.ts';
import { ensureSandboxGateway } from './domain/sandbox/gateway.ts';

/**
 * On the embedded default's first run, seed a demo brand so a new user can try
 * the service at once, and print what they need. Secrets go to the terminal
 * once, never to the structured log.
 */
export async function firstRunSetup(runtime: Runtime, port: number): Promise<void> {
  if (!runtime.embedded) return;
  const { deps } = runtime;
  const em = deps.orm.em.fork();
  if ((await em.count(Brand, {})) > 0) return;
  const brand = await createBrand(em, { name: 'Demo Shop' });
  const { key } = await createApiKey(em, brand.id, { name: 'demo key', mode: 'test' });
  // A day rather than the usual 15 minutes: whoever starts the service may pair the phone later.
  const pairing = await createPairingCode(em, brand.id, { ttlMinutes: 24 * 60 });
  // The built-in test gateway, so a demo payment can be paid end to end on the checkout.
  await ensureSandboxGateway(em);
  const base = deps.config.PUBLIC_BASE_URL.replace(/:\d+$/, `:${port}`);
  const lines = [
    '',
    'First run: a demo brand was created. Keep these; they are shown once.',
    `  Admin token:        ${deps.secrets.adminToken}`,
    `  Demo brand API key: ${key}`,
    `  Pairing code:       ${pairing.code} (one use, valid until ${pairing.expiresAt.toISOString()})`,
    `  API reference:      ${base}/docs`,
    `  Try it:             curl -H "Authorization: Bearer ${key}" ${base}/api/v1/brand`,
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
