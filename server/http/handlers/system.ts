import { initServer } from '@ts-rest/express';
import { contract } from '../../../contract/index.ts';
import type { AppDeps } from '../../deps.ts';
import { readiness } from '../readiness.ts';

const s = initServer();

export function systemHandlers(deps: AppDeps) {
  return s.router(contract.system, {
    health: async () => ({ status: 200, body: { success: true, data: { status: 'ok', server_time: new Date().toISOString() } } }),
    ready: async () => {
      const { ready, data } = await readiness(deps);
      return ready ? { status: 200, body: { success: true, data } } : { status: 503, body: { success: true, data } };
    },
  });
}
