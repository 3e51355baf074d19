import { defineHostileSuite } from '../support/hostile-suite.ts';

// Merchant, device, checkout and system routes, as found in the contract.
defineHostileSuite('hostile-public', (r) => !r.path.startsWith('/api/admin/'));
