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

/** Contract name → SDK name for every route; collisions keep the contract name. */
export function sdkNames(routes: readonly NamedRoute[]): Map<string, SdkName> {
  const out = new Map<string, SdkName>();
  const taken = new Set<string>();
  const moved: Array<{ namespace: string[]; parentNs: string; segs: string[] }> = [];
  const planned = routes.map(({ name, route }) => {
    const parts = name.split('.');
    const key = parts.pop()!;
    const byNoun = movedName(parts, key, route.path);
    if (byNoun) moved.push({ namespace: byNoun.slice(0, -1), parentNs: parts.join('.'), segs: segments(route.path) });
    return { name, route, parts, key, target: byNoun ?? (VERBS[key] ? [...parts, VERBS[key]!] : null) };
  });
  const resolved = planned.map((p) => {
    let target = p.target;
    if (!target) {
      // An action under a moved resource's path goes with it: /webhooks/endpoint/secret-rotations.
      const segs = segments(p.route.path);
      const home = moved
        .filter((m) => m.parentNs === p.parts.join('.') && isPrefix(m.segs, segs) && m.segs.length < segs.length)
        .sort((a, b) => b.segs.length - a.segs.length)[0];
      target = home ? [...home.namespace, p.key] : [...p.parts, p.key];
    }
    return { contract: p.name, wanted: target.join('.') };
  });
  // Routes already named as the SDK would name them keep that name; a renamed
  // route whose new name is taken keeps its contract name (contract names are unique).
  for (const r of resolved) if (r.wanted === r.contract) taken.add(r.contract);
  for (const r of resolved) {
    let name = r.wanted;
    if (name !== r.contract) {
      if (taken.has(name)) name = r.contract;
      taken.add(name);
    }
    out.set(r.contract, { name, alias: name === r.contract ? null : r.contract });
  }
  // An alias must not shadow a real name.
  for (const v of out.values()) if (v.alias && taken.has(v.alias)) v.alias = null;
  return out;
}
