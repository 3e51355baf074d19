/**
 * Builds the SDK packages (clients/merchant, clients/device) to JavaScript plus
 * declarations with tsc, and optionally packs them with `npm pack`.
 *
 *   npm run build:sdk                         # build both into clients/<name>/dist
 *   npm run build:sdk -- --pack tmp/sdk       # build, then write the .tgz files into tmp/sdk
 *   npm run build:sdk -- --only device
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SDK_PACKAGES = ['merchant', 'device'] as const;
export type SdkPackage = (typeof SDK_PACKAGES)[number];

function run(cmd: string, args: string[], cwd: string): string {
  const res = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: process.env });
  if (res.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} failed in ${path.relative(root, cwd) || '.'}:\n${res.stdout}${res.stderr}`);
  }
  return res.stdout;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

/**
 * tsc rewrites `./x.ts` to `./x.js` in JavaScript but leaves declarations alone;
 * consumers on older TypeScript or other resolvers want `.js` there too.
 */
export function rewriteDeclarationImports(text: string): string {
  return text.replace(/((?:from|import)\s*\(?\s*['"])(\.{1,2}\/[^'"]+)\.ts(['"])/g, '$1$2.js$3');
}

/** Builds one package; returns its dist directory. */
export function buildPackage(name: SdkPackage): string {
  const dir = path.join(root, 'clients', name);
  const dist = path.join(dir, 'dist');
  rmSync(dist, { recursive: true, force: true });
  run(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(dir, 'tsconfig.json')], root);
  for (const file of filesUnder(dist)) {
    const text = readFileSync(file, 'utf8');
    // The packages ship the contract, never the server: a contract file importing server code would leak it.
    if (/from ['"][^'"]*\/server\//.test(text)) throw new Error(`${path.relative(root, file)} imports server code; the contract must stay server-free`);
    if (file.endsWith('.d.ts')) writeFileSync(file, rewriteDeclarationImports(text));
  }
  const leaks = libraryTypesInDeclarations(path.join(dist, 'clients', name, 'index.d.ts'));
  if (leaks.length) throw new Error(`the published declarations name library types (a strict project without skipLibCheck would check them):\n${leaks.join('\n')}`);
  return dist;
}

/**
 * Declarations reachable from the entry point that import ts-rest or zod: the SDK
 * ships its own types (api.generated.ts), so a consumer's compiler checks ours only.
 */
export function libraryTypesInDeclarations(entry: string): string[] {
  const seen = new Set<string>();
  const leaks: string[] = [];
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) visit(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.d.ts')));
      else if (!spec.startsWith('node:')) leaks.push(`${path.relative(root, file)} imports ${spec}`);
    }
  };
  visit(entry);
  return leaks;
}

/** Packs a built package; returns the absolute path of the tarball. */
export function packPackage(name: SdkPackage, destination: string): string {
  mkdirSync(destination, { recursive: true });
  const out = run('npm', ['pack', '--json', '--pack-destination', destination], path.join(root, 'clients', name));
  const [info] = JSON.parse(out.slice(out.indexOf('['))) as Array<{ filename: string }>;
  return path.join(destination, info!.filename);
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { pack: { type: 'string' }, only: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    console.log('Usage: npm run build:sdk -- [--only merchant|device] [--pack <dir>]');
    process.exit(0);
  }
  const names = values.only ? [values.only] : [...SDK_PACKAGES];
  for (const name of names) {
    if (!(SDK_PACKAGES as readonly string[]).includes(name)) {
      console.error(`Unknown package "${name}" (expected ${SDK_PACKAGES.join(' or ')})`);
      process.exit(64);
    }
    const dist = buildPackage(name as SdkPackage);
    console.log(`built @paycollect/${name} -> ${path.relative(root, dist)}`);
    if (values.pack) console.log(`packed ${path.relative(root, packPackage(name as SdkPackage, path.resolve(values.pack)))}`);
  }
}
