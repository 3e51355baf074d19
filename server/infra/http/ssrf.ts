import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which addresses a merchant-supplied webhook URL may reach. The rule is an allow-list:
 * only what ipaddr.js calls plain 'unicast' (and, for IPv6, only inside 2000::/3, the
 * global unicast block) passes; every named special range is refused by its name.
 */

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

// Named so logs say "metadata" rather than "linkLocal"/"uniqueLocal"; the ranges
// around them are refused anyway.
const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254']);

export function classifyAddress(ip: string): AddressVerdict {
  // isIP is strict dotted-quad / RFC 4291 text: it refuses "0177.0.0.1" or "2130706433",
  // which ipaddr.parse would accept and a resolver never returns.
  if (isIP(ip) === 0) return { allowed: false, reason: 'invalid' };
  return classifyParsed(ipaddr.parse(ip));
}

function classifyParsed(addr: ipaddr.IPv4 | ipaddr.IPv6): AddressVerdict {
  if (METADATA.has(addr.toNormalizedString()) || METADATA.has(addr.toString())) {
    return { allowed: false, reason: 'metadata' };
  }
  if (addr.kind() === 'ipv4') {
    const range = addr.range();
    return range === 'unicast' ? { allowed: true } : { allowed: false, reason: range };
  }
  const v6 = addr as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded) {
    const inner = classifyParsed(embedded);
    return inner.allowed ? inner : { allowed: false, reason: `${v6.range()}:${inner.reason}` };
  }
  const range = v6.range();
  if (range !== 'unicast') return { allowed: false, reason: range };
  // ipaddr.js defaults anything unnamed to 'unicast', including ::/8 (IPv4-compatible
  // ::a.b.c.d among it) and other unassigned space; real targets live in 2000::/3.
  if (!v6.match(GLOBAL_UNICAST)) return { allowed: false, reason: 'reserved' };
  return { allowed: true };
}

const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];

/** IPv6 forms whose packets end up at an IPv4 address; judged by that address. */
function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4 | null {
  const b = v6.toByteArray();
  switch (v6.range()) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d (SIIT translated)
      return new ipaddr.IPv4(b.slice(12, 16));
    case 'rfc6052':
      // Only the well-known 64:ff9b::/96 has a fixed position; the local-use /48 can
      // embed anywhere and is refused by name.
      return b[4] === 0 && b[5] === 0 ? new ipaddr.IPv4(b.slice(12, 16)) : null;
    case '6to4': // 2002:AABB:CCDD::/48
      return new ipaddr.IPv4(b.slice(2, 6));
    default:
      return null;
  }
}

export class SsrfError extends Error {
  override readonly name = 'SsrfError';
  readonly code = 'ERR_SSRF_REFUSED';
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** The URL checks that need no DNS: scheme, credentials, host present. */
export function parseTargetUrl(url: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new SsrfError('invalid_url', 'The webhook URL is not a valid absolute URL.');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new SsrfError('scheme', `Webhook URLs must use http or https, not ${u.protocol.slice(0, -1)}.`);
  }
  // Credentials would be sent on every delivery and end up in our logs.
  if (u.username !== '' || u.password !== '') {
    throw new SsrfError('credentials', 'Webhook URLs must not carry credentials.');
  }
  if (u.hostname === '') throw new SsrfError('invalid_url', 'The webhook URL has no host.');
  return u;
}

/** WHATWG URL keeps IPv6 literals bracketed; resolvers and isIP want them bare. */
export function hostOf(u: URL): string {
  return u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
}

/** Throws SsrfError naming the first refused address. */
export function assertAddressesAllowed(host: string, addresses: readonly ResolvedAddress[]): void {
  for (const { address } of addresses) {
    const verdict = classifyAddress(address);
    if (!verdict.allowed) {
      throw new SsrfError(verdict.reason, `${host} resolves to ${address}, which is not a public address (${verdict.reason}).`);
    }
  }
}

/**
 * Validates a webhook URL and resolves its host. Every address must pass: a name
 * with one public and one private record is refused, since the connect path could
 * pick either. This is the check for saving an endpoint; the delivery path pins its
 * own resolution (outbound.ts), so a later DNS change cannot slip past it.
 */
export async function checkUrl(url: string, options: { allowPrivate: boolean }): Promise<ResolvedAddress[]> {
  const u = parseTargetUrl(url);
  const host = hostOf(u);
  let addresses: ResolvedAddress[];
  try {
    addresses = (await lookup(host, { all: true, verbatim: true })) as ResolvedAddress[];
  } catch (err) {
    throw new SsrfError('unresolvable', `${host} could not be resolved (${(err as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  if (addresses.length === 0) throw new SsrfError('unresolvable', `${host} has no addresses.`);
  if (!options.allowPrivate) assertAddressesAllowed(host, addresses);
  return addresses;
}
