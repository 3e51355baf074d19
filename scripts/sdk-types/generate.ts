import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { z } from 'zod';
import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { sdkNames } from '../../clients/shared/naming.ts';
import { listRoutes, pathParamNames, schemaKeys } from '../../clients/shared/resources.ts';

/*
 * Writes each SDK's public types as plain TypeScript (`clients/<sdk>/api.generated.ts`):
 * named models, params and one interface per resource. The types come from the
 * contract through the compiler (zod's output/input types, printed in full), so
 * the published declarations name no ts-rest or zod type and compile in a strict
 * project without skipLibCheck, while a contract change still changes them.
 */

export interface SdkTypesInput {
  /** Repository-relative module exporting the contract, e.g. `contract/merchant/index.ts`. */
  contractModule: string;
  contractExport: string;
  router: AppRouter;
  /** Prefix of the top-level interface: `Merchant` → `MerchantResources`. */
  prefix: string;
  /** Webhook event schemas by event name, with the module exporting them. */
  events?: { module: string; exportName: string; schemas: Record<string, z.ZodType> };
}

const SUCCESS = [200, 201, 202, 203, 204] as const;
const pascal = (s: string) => s.replace(/(^|[._-])([a-z0-9])/gi, (_m, _p, c: string) => c.toUpperCase());
const camel = (s: string) => s.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

type DataKind = 'none' | 'object' | 'array' | 'page';
interface Success {
  status: number;
  kind: DataKind;
  id: string | null;
  /** The item schema (object data, or the element of a list). */
  schema: unknown;
}
interface RouteSpec {
  index: number;
  keys: string[];
  route: AppRoute;
  sdkName: string;
  alias: string | null;
  successes: Success[];
  paginated: boolean;
  bodyId: string | null;
}

function schemaId(schema: unknown): string | null {
  const id = schema && typeof schema === 'object' ? z.globalRegistry.get(schema as z.ZodType)?.id : undefined;
  return typeof id === 'string' && /^[A-Z][A-Za-z0-9]*$/.test(id) ? id : null;
}

function objectShape(schema: unknown): Record<string, unknown> | null {
  const def = (schema as { _zod?: { def?: { type?: string; shape?: Record<string, unknown> } } } | undefined)?._zod?.def;
  return def?.type === 'object' ? (def.shape ?? null) : null;
}

function successOf(route: AppRoute): Success[] {
  const out: Success[] = [];
  for (const status of SUCCESS) {
    const schema = (route.responses as Record<number, unknown>)[status];
    if (schema === undefined) continue;
    const shape = objectShape(schema);
    if (!shape || !('data' in shape)) {
      out.push({ status, kind: 'none', id: null, schema: null });
      continue;
    }
    const data = shape.data as { _zod?: { def?: { type?: string; element?: unknown } } };
    if (data?._zod?.def?.type === 'array') {
      out.push({ status, kind: 'meta' in shape ? 'page' : 'array', id: schemaId(data._zod.def.element), schema: data._zod.def.element });
    } else {
      out.push({ status, kind: 'object', id: schemaId(data), schema: data });
    }
  }
  return out;
}

function specs(router: AppRouter): RouteSpec[] {
  const names = sdkNames(listRoutes(router));
  const keysOf = (r: AppRouter, prefix: string[] = []): string[][] =>
    Object.entries(r).flatMap(([k, v]) => (isAppRoute(v) ? [[...prefix, k]] : keysOf(v as AppRouter, [...prefix, k])));
  return keysOf(router).map((keys, index) => {
    let node: unknown = router;
    for (const k of keys) node = (node as Record<string, unknown>)[k];
    const route = node as AppRoute;
    const sdk = names.get(keys.join('.'))!;
    const successes = successOf(route);
    return {
      index,
      keys,
      route,
      sdkName: sdk.name,
      alias: sdk.alias,
      successes,
      paginated: route.method === 'GET' && successes.some((s) => s.kind === 'page') && schemaKeys(route.query).includes('page'),
      bodyId: route.method === 'GET' ? null : schemaId((route as { body?: unknown }).body),
    };
  });
}

/** The probe: one alias per type the output needs, resolved by the compiler against the real contract. */
function probeSource(input: SdkTypesInput, list: RouteSpec[], fromDir: string): string {
  const rel = (m: string) => {
    const r = path.relative(fromDir, path.resolve(process.cwd(), m)).replaceAll(path.sep, '/');
    return r.startsWith('.') ? r : `./${r}`;
  };
  const lines = [
    `import type { z } from 'zod';`,
    `import type { ${input.contractExport} } from '${rel(input.contractModule)}';`,
    `import type { RouteParams } from '${rel('clients/shared/resources.ts')}';`,
    `type C = typeof ${input.contractExport};`,
  ];
  if (input.events) lines.push(`import type { ${input.events.exportName} } from '${rel(input.events.module)}';`);
  for (const s of list) {
    const r = `C${s.keys.map((k) => `['${k}']`).join('')}`;
    lines.push(`export type P_${s.index} = RouteParams<${r}>;`);
    lines.push(`export type PN_${s.index} = NonNullable<RouteParams<${r}>>;`);
    lines.push(
      `export type PO_${s.index} = undefined extends RouteParams<${r}> ? 'optional' : Partial<RouteParams<${r}>> extends RouteParams<${r}> ? 'optional' : 'required';`,
    );
    // The codes each error status can carry, as the contract declares them per route (contract/common/responses.ts).
    lines.push(
      `export type ERR_${s.index} = { [S in keyof ${r}['responses'] as S extends number ? (\`\${S}\` extends \`4\${string}\` | \`5\${string}\` ? S : never) : never]: Extract<z.output<${r}['responses'][S]>, { success: false }> extends { errors: Array<{ code: infer C }> } ? C : never };`,
    );
    for (const ok of s.successes) {
      const out = `z.output<${r}['responses'][${ok.status}]>`;
      if (ok.kind === 'object') lines.push(`export type D_${s.index}_${ok.status} = ${out}['data'];`);
      if (ok.kind === 'array' || ok.kind === 'page') lines.push(`export type D_${s.index}_${ok.status} = ${out}['data'][number];`);
      if (ok.kind === 'page') lines.push(`export type M_${s.index}_${ok.status} = ${out}['meta'];`);
    }
  }
  if (input.events) {
    for (const name of Object.keys(input.events.schemas)) {
      lines.push(`export type E_${pascal(name)} = z.output<(typeof ${input.events.exportName})['${name}']>;`);
    }
  }
  return `${lines.join('\n')}\n`;
}

interface Printed {
  text: string;
  isObject: boolean;
}

function printProbe(file: string): Map<string, Printed> {
  const config = ts.getParsedCommandLineOfConfigFile(path.resolve('tsconfig.json'), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  })!;
  const program = ts.createProgram([file], { ...config.options, noEmit: true });
  const diagnostics = ts.getPreEmitDiagnostics(program, program.getSourceFile(file));
  if (diagnostics.length) throw new Error(ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => process.cwd(), getNewLine: () => '\n' }));
  const checker = program.getTypeChecker();
  const out = new Map<string, Printed>();
  const flags = ts.NodeBuilderFlags.NoTruncation | ts.NodeBuilderFlags.InTypeAlias | ts.NodeBuilderFlags.MultilineObjectLiterals;
  const printer = ts.createPrinter({ removeComments: true });
  const sourceFile = program.getSourceFile(file)!;
  for (const st of sourceFile.statements) {
    if (!ts.isTypeAliasDeclaration(st) || !st.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
    const type = checker.getTypeAtLocation(st.name);
    const node = checker.typeToTypeNode(type, st, flags);
    if (!node) throw new Error(`${st.name.text}: the compiler could not print this type`);
    // The printer indents by four; the repository by two.
    const text = printer.printNode(ts.EmitHint.Unspecified, node, sourceFile).replace(/^((?: {4})+)/gm, (m) => ' '.repeat(m.length / 2));
    if (/\bz\.|\bimport\(|ZodType|AppRoute/.test(text)) throw new Error(`${st.name.text} printed as a library type: ${text.slice(0, 200)}`);
    out.set(st.name.text, { text, isObject: !type.isUnion() && (type.flags & ts.TypeFlags.Object) !== 0 && text.startsWith('{') });
  }
  return out;
}

/** Top-level members of an object schema with their `.describe()` text (through optional/default/pipe wrappers). */
function memberDescriptions(schema: unknown): Map<string, string> {
  const out = new Map<string, string>();
  let shape: Record<string, unknown> | null = null;
  let s = schema as { _zod?: { def?: Record<string, unknown> } } | undefined;
  for (let depth = 0; s?._zod?.def && depth < 10 && !shape; depth++) {
    shape = objectShape(s);
    s = (s._zod.def.innerType ?? s._zod.def.in) as typeof s;
  }
  for (const [key, member] of Object.entries(shape ?? {})) {
    const text = (member as { description?: unknown }).description;
    if (typeof text === 'string' && text.trim() !== '') out.set(key, text.trim());
  }
  return out;
}

/** The printed object type with each described top-level member documented, as editors show on hover. */
function withPropertyDocs(text: string, schema: unknown): string {
  const docs = memberDescriptions(schema);
  if (docs.size === 0) return text;
  return text.replace(/^ {2}([A-Za-z_$][\w$]*|"[^"]+")(\??): /gm, (line, rawKey: string) => {
    const described = docs.get(rawKey.replace(/^"|"$/g, ''));
    return described ? `${doc([described], '  ')}${line}` : line;
  });
}

function doc(lines: Array<string | undefined>, indent: string): string {
  const body = lines.filter((l): l is string => !!l).flatMap((l) => l.split('\n'));
  if (body.length === 0) return '';
  if (body.length === 1) return `${indent}/** ${body[0]!.replaceAll('*/', '*\\/')} */\n`;
  return `${indent}/**\n${body.map((l) => `${indent} * ${l.replaceAll('*/', '*\\/')}`.trimEnd()).join('\n')}\n${indent} */\n`;
}

/**
 * The members of a printed discriminated union (`z.discriminatedUnion` whose
 * options all carry an id), each with its id and its printed text, or null for
 * any other type. Members are matched to options by the discriminator's literal.
 */
function discriminatedMembers(t: Printed, schema: unknown): Array<[string, string, unknown]> | null {
  const def = (schema as { _zod?: { def?: { type?: string; discriminator?: string; options?: unknown[] } } } | null)?._zod?.def;
  if (def?.type !== 'union' || typeof def.discriminator !== 'string' || !def.options?.length) return null;
  const texts = t.text.split(/\n\} \| \{\n/).map((part, i, all) => (i === 0 ? part : `{\n${part}`) + (i === all.length - 1 ? '' : '\n}'));
  if (texts.length !== def.options.length) return null;
  const out: Array<[string, string, unknown]> = [];
  for (const option of def.options) {
    const id = schemaId(option);
    const literal = (objectShape(option)?.[def.discriminator] as { _zod?: { def?: { values?: unknown[] } } } | undefined)?._zod?.def?.values?.[0];
    const text = texts.find((x) => x.includes(`\n  ${def.discriminator}: ${JSON.stringify(literal)};`));
    if (!id || text === undefined) return null;
    out.push([id, text, option]);
  }
  return out;
}

/** Renders `clients/<sdk>/api.generated.ts`. */
export function renderSdkTypes(input: SdkTypesInput, outFile: string): string {
  const list = specs(input.router);
  const dir = path.dirname(outFile);
  const probe = path.join(dir, `.types-probe-${process.pid}.ts`);
  writeFileSync(probe, probeSource(input, list, dir));
  let printed: Map<string, Printed>;
  try {
    printed = printProbe(probe);
  } finally {
    rmSync(probe, { force: true });
  }
  const get = (alias: string) => printed.get(alias)!;

  // Named types, first come first named; the same name with a different shape gets a suffix.
  const models = new Map<string, Printed>();
  const nameFor = (wanted: string, t: Printed, schema: unknown = null): string => {
    const members = discriminatedMembers(t, schema);
    // A discriminated union of named objects (a payment's transaction and intent
    // forms): each member is its own documented interface, the union names them.
    if (members) t = { text: members.map(([id, text, option]) => nameFor(id, { text, isObject: true }, option)).join(' | '), isObject: false };
    for (let n = 1; ; n++) {
      const name = n === 1 ? wanted : `${wanted}${n}`;
      const have = models.get(name);
      if (!have) {
        models.set(name, { ...t, text: t.isObject ? withPropertyDocs(t.text, schema) : t.text });
        return name;
      }
      if (have.text === (t.isObject ? withPropertyDocs(t.text, schema) : t.text)) return name;
    }
  };

  interface Method {
    ns: string[];
    key: string;
    text: string;
  }
  const methods: Method[] = [];
  for (const s of list) {
    const sdkParts = s.sdkName.split('.');
    const fallback = pascal(sdkParts.join('_'));
    const results = s.successes.map((ok) => {
      if (ok.kind === 'none') return 'void';
      const item = nameFor(ok.id ?? `${fallback}${ok.kind === 'object' ? 'Result' : 'Item'}`, get(`D_${s.index}_${ok.status}`), ok.schema);
      if (ok.kind === 'object') return item;
      if (ok.kind === 'array') return `${item}[]`;
      return `Page<${item}, ${nameFor(schemaIdOfMeta(s, ok.status) ?? `${fallback}Meta`, get(`M_${s.index}_${ok.status}`))}>`;
    });
    const result = [...new Set(results)].join(' | ') || 'void';
    const pathArgs = pathParamNames(s.route.path).map((p) => `${camel(p)}: string | number`);
    const params = get(`P_${s.index}`).text === 'never' ? null : nameFor(s.bodyId ?? `${fallback}Params`, get(`PN_${s.index}`), s.route.method === 'GET' ? s.route.query : (s.route as { body?: unknown }).body);
    const optional = get(`PO_${s.index}`).text.includes('optional');
    const args = [...pathArgs, ...(params ? [`params${optional ? '?' : ''}: ${params}`] : []), 'options?: O'].join(', ');
    const listArgs = [...pathArgs, ...(params ? [`params?: ${params}`] : []), 'options?: O'].join(', ');
    const summary = (s.route as { summary?: string }).summary;
    const description = (s.route as { description?: string }).description;
    const http = `\`${s.route.method} ${s.route.path}\``;
    const signature = (key: string, deprecated: string | null, indent: string) => {
      const paragraphs = [summary, description, http, deprecated ? `@deprecated Use \`${deprecated}\` (same call).` : undefined].filter((p): p is string => !!p);
      const comment = doc([paragraphs.join('\n\n')], indent);
      if (!s.paginated) return `${comment}${indent}${key}(${args}): Promise<WithResponse<${result}>>;`;
      const page = result;
      const item = page.replace(/^Page<(.*), [^,]+>$/, '$1');
      return [
        `${comment}${indent}${key}: {`,
        `${indent}  (${args}): Promise<WithResponse<${page}>>;`,
        `${indent}  /** Every page from \`params.page\` (default 1) to the last, fetched as you iterate. */`,
        `${indent}  pages(${listArgs}): AsyncIterable<WithResponse<${page}>>;`,
        `${indent}  /** Every item of every page, a page at a time. */`,
        `${indent}  items(${listArgs}): AsyncIterable<${item}>;`,
        `${indent}};`,
      ].join('\n');
    };
    methods.push({ ns: sdkParts.slice(0, -1), key: sdkParts.at(-1)!, text: signature(sdkParts.at(-1)!, null, '  ') });
    if (s.alias) {
      const aliasParts = s.alias.split('.');
      methods.push({ ns: aliasParts.slice(0, -1), key: aliasParts.at(-1)!, text: signature(aliasParts.at(-1)!, s.sdkName, '  ') });
    }
  }

  const events: string[] = [];
  if (input.events) {
    for (const [name, schema] of Object.entries(input.events.schemas)) {
      events.push(nameFor(schemaId(schema) ?? `${pascal(name)}Event`, get(`E_${pascal(name)}`), schema));
    }
  }

  const byStatus = (text: string) => {
    const members = text.split('\n').filter((l) => /^\s+\d{3}: /.test(l));
    members.sort((a, b) => Number(a.trim().slice(0, 3)) - Number(b.trim().slice(0, 3)));
    return members.length ? `{\n${members.map((l) => `  ${l}`).join('\n')}\n  }` : '{}';
  };
  const errorCodes = list.map((s) => `${doc([`\`${s.route.method} ${s.route.path}\``], '  ')}  '${s.sdkName}': ${byStatus(get(`ERR_${s.index}`).text)};`);

  const namespaces = new Map<string, Method[]>();
  for (const m of methods) {
    const key = m.ns.join('.');
    namespaces.set(key, [...(namespaces.get(key) ?? []), m]);
  }
  const out: string[] = [
    '/*',
    ' * Generated by scripts/sdk-types from the contract: do not edit. `npm run sdk:types`',
    ' * rewrites it, `npm run check` fails when it is out of date.',
    ' */',
    "import type { RequestOptions } from '../shared/http.ts';",
    "import type { WithResponse } from '../shared/response-meta.ts';",
    '',
  ];
  for (const [name, t] of models) {
    out.push(t.isObject ? `export interface ${name} ${t.text}\n` : `export type ${name} = ${t.text};\n`);
  }
  if (events.length) {
    out.push('/** Every webhook event body, discriminated by `event`: `if (e.event === \'payment.completed\') e.data.amount`. */');
    out.push(`export type WebhookEvent =\n  | ${events.join('\n  | ')};\n`);
    out.push("/** The `event` names a webhook can carry. */\nexport type WebhookEventName = WebhookEvent['event'];\n");
  }
  const top: string[] = [];
  for (const [ns, ms] of namespaces) {
    if (ns === '') continue;
    const iface = `${pascal(ns.replaceAll('.', '_'))}Resource`;
    out.push(`export interface ${iface}<O = RequestOptions> {\n${ms.map((m) => m.text).join('\n')}\n}\n`);
    top.push(`  ${ns.split('.')[0]}: ${iface}<O>;`);
  }
  out.push(
    `/**\n * The error codes each call can answer, by HTTP status, as the contract declares them:\n * \`catch (e) { if (e instanceof PaycollectError && e.code === 'PAYMENT_NOT_FOUND') … }\`.\n */\nexport interface ${input.prefix}ErrorCodes {\n${errorCodes.join('\n')}\n}\n`,
  );
  const rootMethods = namespaces.get('') ?? [];
  out.push(`/** One namespace per resource of the API. */\nexport interface ${input.prefix}Resources<O = RequestOptions> {\n${[...top, ...rootMethods.map((m) => m.text)].join('\n')}\n}\n`);
  const text = out.join('\n');
  // Only the imports the file uses (lint refuses unused ones).
  if (/\bPage</.test(text)) out.splice(5, 0, "import type { Page } from '../shared/pagination.ts';");
  return out.join('\n').replace(/\n{3,}/g, '\n\n');

  function schemaIdOfMeta(s: RouteSpec, status: number): string | null {
    const shape = objectShape((s.route.responses as Record<number, unknown>)[status]);
    return shape ? schemaId(shape.meta) : null;
  }
}
