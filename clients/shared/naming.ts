/*
 * SDK method names, derived from the contract's route keys and paths so a route
 * added to the contract gets a name with no SDK change. One vocabulary on every
 * resource: `list`, `create`, `retrieve`, `update`, `del`, plus action verbs
 * (`rotateSecret`, `cancel`). A key like `getEndpoint` under `webhooks` becomes
 * `webhookEndpoints.retrieve` when the path has that noun (`/webhooks/endpoint`),
 * and other routes under that path follow it (`rotateSecret`). The contract's
 * own name stays callable as a deprecated alias when it differs.
 */

export interface NamedRoute {
  /** Dotted contract name, e.g. `webhooks.getEndpoint`. */
  name: string;
  route: { method: string; path: string };
}

export interface SdkName {
  /** Dotted SDK name, e.g. `webhookEndpoints.retrieve`. */
  name: string;
  /** The contract name, kept as a deprecated alias; null when it is the SDK name. */
  alias: string | null;
}

const VERBS: Record<string, string> = {
  get: 'retrieve',
  retrieve: 'retrieve',
  list: 'list',
  create: 'create',
  put: 'update',
  patch: 'update',
  update: 'update',
  delete: 'del',
  del: 'del',
};

const kebab = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
const singular = (s: string) => (s.endsWith('ies') ? `${s.slice(0, -3)}y` : s.endsWith('s') ? s.slice(0, -1) : s);
const plural = (s: string) => (s.endsWith('s') ? s : s.endsWith('y') ? `${s.slice(0, -1)}ies` : `${s}s`);
const segments = (path: string) => path.split('/').filter((p) => p !== '' && !p.startsWith(':'));

/** Moves `getEndpoint` to `<parent>Endpoints.retrieve` when the route's path names the noun. */
function movedName(namespace: string[], key: string, path: string): string[] | null {
  const m = /^(get|list|create|put|patch|update|delete)([A-Z][A-Za-z0-9]*)$/.exec(key);
  if (!m || namespace.length === 0) return null;
  const noun = m[2]!;
  const segs = segments(path);
  if (!segs.includes(kebab(noun)) && !segs.includes(kebab(singular(noun))) && !segs.includes(kebab(plural(noun)))) return null;
  const parent = namespace[namespace.length - 1]!;
  return [...namespace.slice(0, -1), `${singular(parent)}${plural(noun)}`, VERBS[m[1]!]!];
}

function isPrefix(prefix: string[], of: string[]): boolean {
  return prefix.length <= of.length && prefix.every((p, i) => of[i] === p);
}

/**
 * Contract name → SDK name for every route. Precedence on a collision: a name the
 * contract already uses, then renames within a namespace (`get` → `retrieve`),
 * then moves to another namespace; a route whose name is taken keeps its contract
 * name (contract names are unique), and so do the actions that would follow it.
 */
export function sdkNames(routes: readonly NamedRoute[]): Map<string, SdkName> {
  const planned = routes.map(({ name, route }) => {
    const parts = name.split('.');
    const key = parts.pop()!;
    const byNoun = movedName(parts, key, route.path);
    const wanted = byNoun ?? (VERBS[key] ? [...parts, VERBS[key]!] : [...parts, key]);
    return { name, parts, key, segs: segments(route.path), byNoun: byNoun !== null, wanted: wanted.join('.') };
  });
  const final = new Map<string, string>();
  const taken = new Set<string>();
  const assign = (p: (typeof planned)[number], wanted: string) => {
    const name = wanted === p.name || !taken.has(wanted) ? wanted : p.name;
    taken.add(name);
    final.set(p.name, name);
  };
  for (const p of planned) if (p.wanted === p.name) assign(p, p.name);
  for (const p of planned) if (!final.has(p.name) && !p.byNoun) assign(p, p.wanted);
  for (const p of planned) if (!final.has(p.name) && p.byNoun) assign(p, p.wanted);
  // An action under a moved resource's path goes with it: /webhooks/endpoint/secret-rotations.
  const homes = planned
    .filter((p) => p.byNoun && final.get(p.name) !== p.name)
    .map((p) => ({ parentNs: p.parts.join('.'), segs: p.segs, namespace: final.get(p.name)!.split('.').slice(0, -1) }));
  for (const p of planned) {
    if (p.byNoun || final.get(p.name) !== p.name || VERBS[p.key]) continue;
    const home = homes
      .filter((h) => h.parentNs === p.parts.join('.') && isPrefix(h.segs, p.segs) && h.segs.length < p.segs.length)
      .sort((x, y) => y.segs.length - x.segs.length)[0];
    const wanted = home ? [...home.namespace, p.key].join('.') : null;
    if (wanted && !taken.has(wanted)) {
      taken.delete(p.name);
      taken.add(wanted);
      final.set(p.name, wanted);
    }
  }
  const out = new Map<string, SdkName>();
  for (const p of planned) {
    const name = final.get(p.name)!;
    // An alias must not shadow a real name.
    out.set(p.name, { name, alias: name === p.name || taken.has(p.name) ? null : p.name });
  }
  return out;
}
