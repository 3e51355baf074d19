// Child process for test/integration/embedded-postgres.test.ts: starts an
// embedded cluster, says READY, and holds it until SIGTERM (or is SIGKILLed).
import { startEmbeddedPostgres } from '../../server/infra/database/embedded.ts';

const [dir, port] = process.argv.slice(2);
const pg = await startEmbeddedPostgres({ dataDir: dir!, port: Number(port), password: 'owner-pw', database: 'owned' });
process.stdout.write('READY\n');
process.on('SIGTERM', () => void pg.stop().then(() => process.exit(0)));
setInterval(() => undefined, 60_000);
