import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFlakyServer, testClient, type FlakyServer } from '../support/sdk-flaky-server.ts';

let s: FlakyServer;
beforeAll(async () => {
  s = await startFlakyServer();
});
afterAll(() => s?.close());
beforeEach(() => s.reset());

describe('calls derived from the contract', () => {
  it('path params are encoded, the envelope is unwrapped', async () => {
    const client = testClient({ baseUrl: `${s.baseUrl}/` });
    expect(await client.get('a/b c?d')).toEqual({ id: 7, name: 'a/b c?d' });
    expect(s.requests[0]!.url).toBe('/api/test/things/a%2Fb%20c%3Fd');
  });

  it('a list returns { data, meta }; query values may be numbers or strings; undefined values are left out', async () => {
    const page = await testClient({ baseUrl: s.baseUrl }).list({ page: 2, per_page: '10', colour: undefined });
    expect(page.meta).toEqual({ page: 2, per_page: 10, total: 45, total_pages: 5 });
    expect(page.data.map((t) => t.id)).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    expect(s.requests[0]!.url).toBe('/api/test/things?page=2&per_page=10');
  });

  it('a 204 resolves to undefined and sends no body', async () => {
    expect(await testClient({ baseUrl: s.baseUrl }).ping()).toBeUndefined();
    expect(s.requests[0]!.body).toBe('');
    expect(s.requests[0]!.headers['content-type']).toBeUndefined();
  });

  it('sends JSON, names the SDK, and adds credentials only where the route metadata asks for them', async () => {
    const client = testClient({ baseUrl: s.baseUrl, headers: { 'X-Trace': 't-1' } });
    await client.create({ name: 'n' });
    await client.ping();
    const [create, ping] = s.requests;
    expect(create!.headers).toMatchObject({
      accept: 'application/json',
      'content-type': 'application/json',
      authorization: 'Bearer test_key',
      'x-client': '@paycollect/test/9.9.9',
      'x-trace': 't-1',
    });
    expect(create!.headers['user-agent']).toBe(`@paycollect/test/9.9.9 node/${process.version}`);
    expect(ping!.headers.authorization).toBeUndefined();
  });

  it('uses the custom fetch it is given', async () => {
    const seen: string[] = [];
    const client = testClient({
      baseUrl: s.baseUrl,
      fetch: async (url, init) => {
        seen.push(`${init.method} ${url}`);
        return fetch(url, init);
      },
    });
    await client.get(1);
    expect(seen).toEqual([`GET ${s.baseUrl}/api/test/things/1`]);
  });
});

describe('pagination', () => {
  it('list.pages() walks every page in order, one request per page', async () => {
    const pages = [];
    for await (const page of testClient({ baseUrl: s.baseUrl }).list.pages({ per_page: 20, colour: 'red' })) pages.push(page);
    expect(pages.map((p) => [p.meta.page, p.data.length])).toEqual([
      [1, 20],
      [2, 20],
      [3, 5],
    ]);
    expect(s.requests.map((r) => r.url)).toEqual([
      '/api/test/things?per_page=20&colour=red&page=1',
      '/api/test/things?per_page=20&colour=red&page=2',
      '/api/test/things?per_page=20&colour=red&page=3',
    ]);
  });

  it('list.pages() starts at the given page', async () => {
    const seen = [];
    for await (const page of testClient({ baseUrl: s.baseUrl }).list.pages({ page: 4, per_page: 10 })) seen.push(page.meta.page);
    expect(seen).toEqual([4, 5]);
  });

  it('list.items() yields every item once, fetching lazily', async () => {
    const client = testClient({ baseUrl: s.baseUrl });
    const ids: number[] = [];
    for await (const item of client.list.items({ per_page: 7 })) ids.push(item.id);
    expect(ids).toEqual(Array.from({ length: 45 }, (_, i) => i + 1));
    expect(s.requests).toHaveLength(7);

    s.reset();
    for await (const item of client.list.items({ per_page: 7 })) {
      if (item.id === 3) break;
    }
    expect(s.requests).toHaveLength(1);
  });
});
