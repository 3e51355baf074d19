import path from 'node:path';
import type { Runtime } from './bootstrap.ts';
import { seedDemo, type DemoSeed } from './domain/brands/demo.ts';
import type { Logger } from './infra/logger.ts';
import { writePrivateFile } from './infra/private-file.ts';
import { ensureFirstOwner } from './domain/operators/service.ts';

/** Where the first run's banner goes when stdout is not a terminal. */
const FIRST_RUN_FILE = 'first-run.txt';

/** The base URL the service is reachable at now (PORT=0 picks the port at listen time). */
function runningBaseUrl(publicBaseUrl: string, port: number): string {
  return publicBaseUrl.replace(/:\d+$/, `:${port}`);
}

/** The console's first owner login, shown once. */
export interface ConsoleOwner {
  email: string;
  password: string;
}

/** The lines that hand over the console's first owner login. */
export function consoleOwnerLines(owner: ConsoleOwner, base: string): string[] {
  return [
    `  Console:            ${base}/admin`,
    `  Console login:      ${owner.email} / ${owner.password} (owner; change the password after logging in)`,
  ];
}

/** What the first run prints: everything a new user needs, once. */
export function firstRunBanner(seed: DemoSeed, adminToken: string, base: string, owner: ConsoleOwner | null = null): string {
  const manual = seed.gateways.find((g) => g.type === 'manual');
  return [
    '',
    'First run: a demo brand was created. Keep these; they are shown once.',
    `  Admin token:        ${adminToken}`,
    ...(owner ? consoleOwnerLines(owner, base) : []),
    `  Demo brand API key: ${seed.apiKey} (test mode: the demo payment, the pairing code and the sandbox)`,
    `  Live API key:       ${seed.liveApiKey} (live mode: sees no test object, never offered the sandbox)`,
    `  Pairing code:       ${seed.pairingCode} (one use, valid until ${seed.pairingCodeExpiresAt.toISOString()})`,
    `  Demo checkout:      ${seed.checkoutUrl} (${seed.amount} ${seed.currency})`,
    `  API reference:      ${base}/docs`,
    `  Gateways:           ${seed.gateways.map((g) => `${g.code} (${g.type})`).join(', ')}`,
    '',
    'Try it:',
    `  curl -H "Authorization: Bearer ${seed.apiKey}" ${base}/api/v1/payments/${seed.paymentId}`,
    `  npm run device-sim -- pair --code ${seed.pairingCode} --base-url ${base}`,
    ...(manual ? [`  (pay with ${manual.code} on the checkout page, then forward its "You have received" SMS: npm run device-sim -- sms --from bKash --body "...")`] : []),
    '  npm run cli -- --help          (admin commands; the token above is read from DATA_DIR/secrets.json)',
    '',
  ].join('\n');
}

/**
 * Shows the banner to the person at the terminal. When stdout is not a
 * terminal it is the log stream (journald, a container runtime, a file) where
 * the JSON logs go and are kept and shipped: the credentials then go to
 * DATA_DIR/first-run.txt (mode 0600, see writePrivateFile) and the log gets
 * one line saying where to read them.
 */
export function deliverFirstRunBanner(
  banner: string,
  out: { isTTY: boolean; write: (text: string) => void; dataDir: string; logger: Logger },
): { file: string | null } {
  if (out.isTTY) {
    out.write(`${banner}\n`);
    return { file: null };
  }
  const file = path.resolve(out.dataDir, FIRST_RUN_FILE);
  writePrivateFile(file, `${banner}\n`);
  out.logger.info({ file }, 'first run: the admin token, demo keys and pairing code are in this file (readable by this user only); read it, then delete it');
  return { file };
}

/**
 * On the embedded default's first run, seed the demo (see seedDemo) and hand
 * over what a new user needs, once, never through the structured log.
 */
export async function firstRunSetup(runtime: Runtime, port: number): Promise<void> {
  const { deps } = runtime;
  const base = runningBaseUrl(deps.config.PUBLIC_BASE_URL, port);
  // Any database without operators gets its first owner (also with DATABASE_URL, and on upgrade).
  const owner = await ensureFirstOwner(deps.db, deps.config.CONSOLE_OWNER_EMAIL);
  const seed = runtime.embedded ? await seedDemo(deps.db, deps.crypto, { publicBaseUrl: base }) : null;
  const out = {
    isTTY: process.stdout.isTTY === true,
    write: (text: string) => process.stdout.write(text),
    dataDir: deps.config.DATA_DIR,
    logger: deps.logger,
  };
  if (seed) deliverFirstRunBanner(firstRunBanner(seed, deps.secrets.adminToken, base, owner), out);
  else if (owner) deliverFirstRunBanner(['', 'The admin console has its first owner. Keep this; it is shown once.', ...consoleOwnerLines(owner, base), ''].join('\n'), out);
}
