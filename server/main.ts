import type { Server } from 'node:http';
import { createApp } from './app.ts';
import { bootstrap } from './bootstrap.ts';
import { ConfigError, configWarnings, loadConfig } from './config.ts';
import { serviceCanEmptyAuditLog } from './infra/database/audit-owner.ts';
import { createLogger } from './infra/logger.ts';
import { firstRunSetup } from './first-run.ts';
import { answerClientErrors } from './http/client-errors.ts';
import { createWorkerHealthApp } from './http/worker-health.ts';

/**
 * config -> database -> jobs -> listen; graceful shutdown on SIGTERM/SIGINT.
 * SERVICE_ROLE decides what listens: the whole app (`all`, `api`) or, for a
 * `worker`, only its health probes on PORT.
 */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  if (config.SERVICE_ROLE !== 'all' && !config.DATABASE_URL) {
    // The embedded database is a cluster under DATA_DIR that one process starts and owns: a second process cannot share it.
    process.stderr.write(`Invalid configuration:\n  SERVICE_ROLE: ${config.SERVICE_ROLE} needs DATABASE_URL (the processes of each role share one PostgreSQL; the embedded one belongs to a single \`npm start\`)\n`);
    process.exit(78);
  }
  const logger = createLogger({ level: config.LOG_LEVEL });
  for (const warning of configWarnings(config)) logger.warn(warning);
  const started = performance.now();
  // A signal during start-up (migrations, the embedded database starting) must
  // not kill the process with the default handler: that would leave the
  // embedded PostgreSQL running as an orphan. Note it and stop once started.
  let requested: string | null = null;
  let shutdown: ((signal: string) => Promise<void>) | null = null;
  const onSignal = (signal: string) => {
    requested ??= signal;
    if (shutdown) void shutdown(signal);
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  const runtime = await bootstrap(config, logger);
  if (requested) {
    logger.info({ signal: requested }, 'stopping: signal received during start-up');
    await runtime.close();
    process.exit(0);
  }
  const { deps } = runtime;
  if (config.SERVICE_ROLE !== 'all' && runtime.generatedSecrets.length) {
    // Keys made up by one process of several: the others decrypt nothing it encrypts unless they read the same ones.
    logger.warn({ secrets: runtime.generatedSecrets }, 'this process generated secrets into DATA_DIR: every api and worker process must use these same ones (README, Running API and worker processes separately)');
  }
  if (await serviceCanEmptyAuditLog(deps.db)) {
    logger.warn('the service\'s database role can empty the audit log (TRUNCATE): run `npm run db:seal-audit-log` (README, Database role)');
  }
  const role = config.SERVICE_ROLE;
  const app = role === 'worker' ? createWorkerHealthApp(deps) : createApp(deps);

  const server: Server = await new Promise((resolve, reject) => {
    const srv = app.listen(config.PORT, config.HOST, () => resolve(srv));
    srv.once('error', reject);
  });
  // Slow clients must not hold sockets forever.
  server.headersTimeout = 20_000;
  server.requestTimeout = 30_000;
  answerClientErrors(server, logger);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  logger.info(
    { port, role, embedded_database: runtime.embedded !== null, migrations_applied: runtime.migrations.length, start_ms: Math.round(performance.now() - started) },
    'service started',
  );
  // The console's first login and the demo are handed over where the console is served.
  if (role !== 'worker') await firstRunSetup(runtime, port);

  let stopping = false;
  shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    deps.state.shuttingDown = true;
    // Open status streams would keep server.close() waiting: end them (the page falls back to polling, then reloads).
    deps.notifications.closeSubscribers();
    // api: requests in flight finish; worker: jobs in flight finish (runtime.close stops the workers first); all: both.
    logger.info({ signal, role }, 'shutting down: no new requests, finishing those in flight');
    const force = setTimeout(() => {
      logger.error('shutdown took too long; closing remaining connections');
      server.closeAllConnections();
    }, config.SHUTDOWN_TIMEOUT_MS);
    force.unref();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    await runtime.close();
    clearTimeout(force);
    logger.info('shutdown complete');
    process.exit(0);
  };
  if (requested) await shutdown(requested);
}

main().catch((err) => {
  process.stderr.write(`Failed to start: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
