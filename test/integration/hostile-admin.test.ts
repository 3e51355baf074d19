import { defineHostileSuite } from '../support/hostile-suite.ts';

// Admin routes, as found in the contract.
defineHostileSuite('hostile-admin', (r) => r.path.startsWith('/api/admin/'));
