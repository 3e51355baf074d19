import { describe, expect, it } from 'vitest';
import { contract } from '../../contract/index.ts';
import { listRoutes, schemaKeys } from '../../clients/shared/resources.ts';
import { PaycollectMerchant } from '../../clients/merchant/index.ts';
import { PaycollectDevice } from '../../clients/device/index.ts';

/** Follows a dotted name (`refunds.list`) through the client's namespaces. */
function at(client: object, name: string): unknown {
  return name.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], client);
}

describe('every route of the contract is a method, with nothing listed by hand', () => {
  const merchant = new PaycollectMerchant({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1' });
  const device = new PaycollectDevice({ baseUrl: 'http://127.0.0.1:1', fingerprint: 'f'.repeat(32) });

  it.each([
    ['merchant', merchant, contract.merchant],
    ['device', device, contract.device],
  ] as const)('%s', (_surface, client, router) => {
    const routes = listRoutes(router);
    expect(routes.length).toBeGreaterThan(0);
    for (const { name } of routes) expect(typeof at(client, name), name).toBe('function');
  });

  it('paginated lists (a `page` query) get pages() and items(); others do not', () => {
    const paginated: string[] = [];
    for (const { name, route } of listRoutes(contract.merchant)) {
      const method = at(merchant, name) as { pages?: unknown; items?: unknown };
      const takesPage = route.method === 'GET' && schemaKeys(route.query).includes('page');
      if (takesPage) paginated.push(name);
      expect([typeof method.pages, typeof method.items], name).toEqual(takesPage ? ['function', 'function'] : ['undefined', 'undefined']);
    }
    expect(paginated).toEqual(expect.arrayContaining(['refunds.list', 'customers.list']));
    expect(paginated).not.toContain('payments.get');
  });

  it('webhooks.constructEvent sits beside the derived webhooks routes', () => {
    expect(typeof merchant.webhooks.constructEvent).toBe('function');
    expect(typeof merchant.webhooks.listDeliveries).toBe('function');
  });
});
