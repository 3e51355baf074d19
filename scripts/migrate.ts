import { loadConfig } from '../server/config.ts';
import { createLogger } from '../server/infra/logger.ts';
import { bootstrap } from '../server/bootstrap.ts';

/** `npm run migrate`: apply pending migrations (bootstrap does it) and exit. */
const config = loadConfig();
const logger = createLogger({ level: config.LOG_LEVEL });
// Works no job and runs no schedule: a deploy step, not a worker.
const runtime = await bootstrap(config, logger, { startJobs: false });
process.stdout.write(runtime.migrations.length ? `applied: ${runtime.migrations.join(', ')}\n` : 'no pending migrations\n');
await runtime.close();
