/**
 * A worker process for crash tests: boots like the server (same bootstrap, same
 * DATA_DIR secrets) with workers on and no HTTP listener, and runs until killed.
 * Logs are JSON lines on stdout; `workers started` says it is consuming.
 */
import { bootstrap } from '../../server/bootstrap.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/infra/logger.ts';

const config = loadConfig({ ...process.env, WORKERS_ENABLED: 'true' });
const logger = createLogger({ level: config.LOG_LEVEL });
const runtime = await bootstrap(config, logger);
process.on('SIGTERM', () => {
  void runtime.close().then(() => process.exit(0));
});
