import { describe, expect, it } from 'vitest';
import { sdkNames, type NamedRoute } from '../../clients/shared/naming.ts';
import { listRoutes } from '../../clients/shared/resources.ts';
import { merchantContract } from '../../contract/merchant/index.ts';
import { deviceContract } from '../../contract/device/index.ts';

const names = (routes: NamedRoute[]) => Object.fromEntries([...sdkNames(routes)].map(([k, v]) => [k, v.alias ? `${v.name} (alias ${v.alias})` : v.name]));
const r = (name: string, method: string, path: string): NamedRoute => ({ name, route: { method, path } });

describe('SDK method names', () => {
  it('the merchant contract reads list/create/retrieve/update on every resource, old names kept as aliases', () => {
    expect(names(listRoutes(merchantContract))).toMatchObject({
      'brand.get': 'brand.retrieve (alias brand.get)',
      'payments.create': 'payments.create',
      'payments.get': 'payments.retrieve (alias payments.get)',
      'refunds.list': 'refunds.list',
      'refunds.get': 'refunds.retrieve (alias refunds.get)',
      'customers.get': 'customers.retrieve (alias customers.get)',
      'webhooks.listDeliveries': 'webhookDeliveries.list (alias webhooks.listDeliveries)',
      'webhooks.getDelivery': 'webhookDeliveries.retrieve (alias webhooks.getDelivery)',
      'webhooks.sendTest': 'webhooks.sendTest',
      // The contract's own endpoint collection wins the names; the single-endpoint routes keep theirs.
      'webhookEndpoints.get': 'webhookEndpoints.retrieve (alias webhookEndpoints.get)',
      'webhookEndpoints.delete': 'webhookEndpoints.del (alias webhookEndpoints.delete)',
      'webhookEndpoints.rotateSecret': 'webhookEndpoints.rotateSecret',
      'webhooks.getEndpoint': 'webhooks.getEndpoint',
      'webhooks.putEndpoint': 'webhooks.putEndpoint',
      'webhooks.rotateSecret': 'webhooks.rotateSecret',
    });
  });

  it('device routes keep their action names; get becomes retrieve', () => {
    expect(names(listRoutes(deviceContract))).toMatchObject({
      'devices.pair': 'devices.pair',
      'dashboard.get': 'dashboard.retrieve (alias dashboard.get)',
      'filterRules.get': 'filterRules.retrieve (alias filterRules.get)',
      // "Unread" is not a noun of the path: the key stays.
      'notifications.listUnread': 'notifications.listUnread',
      'smsQueue.report': 'smsQueue.report',
    });
  });

  it('routes added later get names with no SDK change: a moved collection and its action, a payment action', () => {
    expect(
      names([
        r('payments.list', 'GET', '/api/v1/payments'),
        r('payments.cancel', 'POST', '/api/v1/payments/:payment_id/cancellations'),
        r('webhooks.listEndpoints', 'GET', '/api/v1/webhooks/endpoints'),
        r('webhooks.createEndpoint', 'POST', '/api/v1/webhooks/endpoints'),
        r('webhooks.getEndpoint', 'GET', '/api/v1/webhooks/endpoints/:id'),
        r('webhooks.updateEndpoint', 'PATCH', '/api/v1/webhooks/endpoints/:id'),
        r('webhooks.deleteEndpoint', 'DELETE', '/api/v1/webhooks/endpoints/:id'),
        r('webhooks.sendEndpointTest', 'POST', '/api/v1/webhooks/endpoints/:id/tests'),
        r('webhooks.rotateEndpointSecret', 'POST', '/api/v1/webhooks/endpoints/:id/secret-rotations'),
      ]),
    ).toEqual({
      'payments.list': 'payments.list',
      'payments.cancel': 'payments.cancel',
      'webhooks.listEndpoints': 'webhookEndpoints.list (alias webhooks.listEndpoints)',
      'webhooks.createEndpoint': 'webhookEndpoints.create (alias webhooks.createEndpoint)',
      'webhooks.getEndpoint': 'webhookEndpoints.retrieve (alias webhooks.getEndpoint)',
      'webhooks.updateEndpoint': 'webhookEndpoints.update (alias webhooks.updateEndpoint)',
      'webhooks.deleteEndpoint': 'webhookEndpoints.del (alias webhooks.deleteEndpoint)',
      'webhooks.sendEndpointTest': 'webhookEndpoints.sendEndpointTest (alias webhooks.sendEndpointTest)',
      'webhooks.rotateEndpointSecret': 'webhookEndpoints.rotateEndpointSecret (alias webhooks.rotateEndpointSecret)',
    });
  });

  it('two routes wanting one name: the one the contract already calls so keeps it, the other keeps its contract name', () => {
    expect(names([r('things.get', 'GET', '/things/:id'), r('things.retrieve', 'GET', '/things/:id/full')])).toEqual({
      'things.get': 'things.get',
      'things.retrieve': 'things.retrieve',
    });
    expect(names([r('things.get', 'GET', '/things/:id'), r('things.put', 'PUT', '/things/:id'), r('things.patch', 'PATCH', '/things/:id')])).toEqual({
      'things.get': 'things.retrieve (alias things.get)',
      'things.put': 'things.update (alias things.put)',
      'things.patch': 'things.patch',
    });
  });
});
