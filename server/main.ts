import type { Server } from 'node:http';
import { createApp } from './app.ts';
import { bootstrap } from './bootstrap.ts';
import { ConfigError, configWarnings, loadConfig } from './config.ts';
import { serviceCanEmptyAuditLog } from './infra/database/audit-owner.ts';
import { createLogger } from './infra/logger.ts';
import { firstRunSetup } from './first-run.ts';
import { answerClientErrors } from './http/client-errors.ts';

/** config -> database -> jobs -> listen; graceful shutdown on SIGTERM/SIGINT. */
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
  if (await serviceCanEmptyAuditLog(deps.db)) {
    logger.warn('the service\'s database role can empty the audit log (TRUNCATE): run `npm run db:seal-audit-log` (README, Database role)');
  }
  const app = createApp(deps);

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
    { port, embedded_database: runtime.embedded !== null, migrations_applied: runtime.migrations.length, start_ms: Math.round(performance.now() - started) },
    'service started',
  );
  await firstRunSetup(runtime, port);

  let stopping = false;
  shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    deps.state.shuttingDown = true;
    // Open status streams would keep server.close() waiting: end them (the page falls back to polling, then reloads).
    deps.notifications.closeSubscribers();
    logger.info({ signal }, 'shutting down: no new requests, finishing those in flight');
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
