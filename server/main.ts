import type { Server } from 'node:http';
import { createApp } from './app.ts';
import { bootstrap } from './bootstrap.ts';
import { ConfigError, loadConfig } from './config.ts';
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
  const started = performance.now();
  const runtime = await bootstrap(config, logger);
  const { deps } = runtime;
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
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    deps.state.shuttingDown = true;
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
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`Failed to start: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
