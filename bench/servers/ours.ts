import type { AddressInfo } from 'node:net';
import { createApp } from '../../server/app.ts';
import { bootstrap } from '../../server/bootstrap.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/infra/logger.ts';

/**
 * Our service as main.ts runs it (config from the environment -> bootstrap ->
 * createApp -> listen), in a process of its own, reporting its port over IPC.
 * SIGTERM closes it cleanly, which is also when `--cpu-prof` writes its profile.
 */
const config = loadConfig(process.env);
const logger = createLogger({ level: config.LOG_LEVEL });
const runtime = await bootstrap(config, logger);
const app = createApp(runtime.deps);
const server = app.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
});

let stopping = false;
process.on('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  runtime.deps.state.shuttingDown = true;
  server.closeAllConnections();
  server.close(() => {
    runtime.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
});
