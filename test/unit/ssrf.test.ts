import { describe, expect, it } from 'vitest';
import { checkUrl, classifyAddress, SsrfError } from '../../server/infra/http/ssrf.ts';

describe('classifyAddress', () => {
  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1', // just outside 172.16/12
    '100.128.0.1', // just outside 100.64/10
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808', // NAT64 of a public address
    '2002:808:808::1', // 6to4 of a public address
  ])('allows public %s', (ip) => {
    expect(classifyAddress(ip)).toEqual({ allowed: true });
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.100.100.200', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.192', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fd00:ec2::254', 'metadata'],
    ['ff02::1', 'multicast'],
    ['fec0::1', 'deprecatedSiteLocal'],
    ['100::1', 'discard'],
    ['2001:db8::1', 'reserved'],
    ['2001::1', 'teredo'],
    ['::7f00:1', 'reserved'], // deprecated IPv4-compatible form
    ['4000::1', 'reserved'], // outside 2000::/3
    ['::ffff:127.0.0.1', 'ipv4Mapped:loopback'],
    ['::ffff:7f00:1', 'ipv4Mapped:loopback'],
    ['::ffff:10.0.0.1', 'ipv4Mapped:private'],
    ['::ffff:169.254.169.254', 'ipv4Mapped:metadata'],
    ['::ffff:0:7f00:1', 'rfc6145:loopback'],
    ['64:ff9b::a00:1', 'rfc6052:private'],
    ['64:ff9b:1::1', 'rfc6052'],
    ['2002:7f00:1::1', '6to4:loopback'],
    ['2002:a9fe:a9fe::1', '6to4:metadata'],
    // Forms a resolver never returns but ipaddr.js would happily read as 127.0.0.1.
    ['0177.0.0.1', 'invalid'],
    ['0x7f.0.0.1', 'invalid'],
    ['2130706433', 'invalid'],
    ['127.1', 'invalid'],
    ['localhost', 'invalid'],
    ['', 'invalid'],
  ])('refuses %s (%s)', (ip, reason) => {
    expect(classifyAddress(ip)).toEqual({ allowed: false, reason });
  });
});

async function refusal(url: string, allowPrivate = false): Promise<string> {
  try {
    await checkUrl(url, { allowPrivate });
    return 'allowed';
  } catch (err) {
    if (err instanceof SsrfError) return err.reason;
    throw err;
  }
}

describe('checkUrl', () => {
  it.each([
    ['ftp://example.com/hook', 'scheme'],
    ['file:///etc/passwd', 'scheme'],
    ['javascript:alert(1)', 'scheme'],
    ['https://user:pw@example.com/hook', 'credentials'],
    ['https://token@example.com/hook', 'credentials'],
    ['not a url', 'invalid_url'],
    ['/relative/hook', 'invalid_url'],
  ])('refuses %s before any lookup (%s)', async (url, reason) => {
    expect(await refusal(url)).toBe(reason);
  });

  it.each([
    ['http://127.0.0.1:8080/hook', 'loopback'],
    ['http://localhost/hook', 'loopback'],
    ['http://[::1]/hook', 'loopback'],
    ['http://[::ffff:127.0.0.1]/hook', 'ipv4Mapped:loopback'],
    ['http://169.254.169.254/latest/meta-data', 'metadata'],
    ['http://0x7f.1/hook', 'loopback'], // WHATWG URL normalises to 127.0.0.1 first
    ['http://2130706433/hook', 'loopback'],
    ['http://0/hook', 'unspecified'],
    ['http://10.1.2.3/hook', 'private'],
  ])('refuses %s (%s)', async (url, reason) => {
    expect(await refusal(url)).toBe(reason);
  });

  it('allows private targets when the setting says so, returning what it resolved', async () => {
    const addresses = await checkUrl('http://127.0.0.1:8080/hook', { allowPrivate: true });
    expect(addresses).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(await refusal('ftp://127.0.0.1/', true)).toBe('scheme');
  });

  it('returns the address of a public IP literal without DNS', async () => {
    expect(await checkUrl('https://8.8.8.8/hook', { allowPrivate: false })).toEqual([{ address: '8.8.8.8', family: 4 }]);
  });

  it('reports a name that does not resolve', async () => {
    expect(await refusal('https://does-not-exist.invalid/hook')).toBe('unresolvable');
  });
});
