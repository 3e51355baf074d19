import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './lib/processes.ts';

/**
 * Summarises a `.cpuprofile` written by `node --cpu-prof` (bench/run.ts
 * --profile): self time by package or source file, and the heaviest functions.
 * Usage: node bench/profile-summary.ts <file.cpuprofile> [top=25] [functionName...]
 * (each named function's inclusive time and nearest callers: e.g. writeBuffer for socket writes, validateResponse for ts-rest's
 * response validation, redact for the logger's redaction).
 */
interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg, ...fnNames] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/profile-summary.ts <file.cpuprofile> [top] [function names: inclusive time of each]');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

/** `node_modules/<pkg>`, a repo-relative source file, or a V8/Node category. */
function area(url: string, name: string): string {
  if (!url) return `(${name || 'native'})`;
  const p = url.replace(/^file:\/\//, '');
  const nm = p.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = p.slice(nm + 'node_modules/'.length).split('/');
    return `node_modules/${rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  if (p.startsWith('node:')) return p;
  return path.relative(repoRoot, p);
}

const areas = new Map<string, number>();
const fns = new Map<string, number>();
for (const [id, us] of selfUs) {
  const n = byId.get(id)!;
  const a = area(n.callFrame.url, n.callFrame.functionName);
  areas.set(a, (areas.get(a) ?? 0) + us);
  const f = `${n.callFrame.functionName || '(anonymous)'} ${a}:${n.callFrame.lineNumber + 1}`;
  fns.set(f, (fns.get(f) ?? 0) + us);
}
// Inclusive time per area: a sample counts once for every area on its stack (callers included),
// which is what shows the cost of a layer whose work happens in its callees (validation, logging).
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const inclusive = new Map<string, number>();
for (const [id, us] of selfUs) {
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const n = byId.get(cur)!;
    if (!n.callFrame.url) continue;
    seen.add(area(n.callFrame.url, n.callFrame.functionName));
  }
  for (const a of seen) inclusive.set(a, (inclusive.get(a) ?? 0) + us);
}

const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)} %`;
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${k}`);
};
console.log(`${path.basename(file)}: ${(total / 1e6).toFixed(1)} s sampled`);
print('Self time by area', areas);
print('Self time by function', fns);
print('Inclusive time by area (callers included)', inclusive);

if (fnNames.length) {
  console.log('\nInclusive time of named functions (callees included, counted once per sample)');
  for (const name of fnNames) {
    let us = 0;
    for (const [id, t] of selfUs) {
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        if (byId.get(cur)!.callFrame.functionName === name) {
          us += t;
          break;
        }
      }
    }
    console.log(`${pct(us)}  ${name}`);
  }
}

if (fnNames.length) {
  // Who calls them: for native functions such as writeBuffer (a socket write), the nearest caller
  // outside Node's internals says which socket: node_modules/pg is a round trip to PostgreSQL.
  console.log('\nNamed functions by nearest caller outside Node (share of that function\'s own time)');
  for (const name of fnNames) {
    const callers = new Map<string, number>();
    let sum = 0;
    for (const [id, us] of selfUs) {
      if (byId.get(id)!.callFrame.functionName !== name) continue;
      let cur = parent.get(id);
      const inside = (url: string) => !url || url.startsWith('node:');
      while (cur !== undefined && inside(byId.get(cur)!.callFrame.url)) cur = parent.get(cur);
      const who = cur === undefined ? '(none)' : area(byId.get(cur)!.callFrame.url, '');
      callers.set(who, (callers.get(who) ?? 0) + us);
      sum += us;
    }
    for (const [who, us] of [...callers].sort((a, b) => b[1] - a[1]).slice(0, 5)) {
      console.log(`${((us / (sum || 1)) * 100).toFixed(1).padStart(5)} %  ${name} <- ${who}`);
    }
  }
}
