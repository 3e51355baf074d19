import type { RequestValidationError } from '@ts-rest/express';
import type { ErrorEnvelope } from '../../contract/common/envelope.ts';

type Item = ErrorEnvelope['errors'][number];

interface Issue {
  message: string;
  path?: ReadonlyArray<PropertyKey | { key: PropertyKey }>;
  code?: string;
  keys?: string[];
}

function pathOf(issue: Issue): string[] {
  return (issue.path ?? []).map((p) => String(typeof p === 'object' && p !== null ? p.key : p));
}

/** Turns one part's validation issues into envelope items with `field` set. */
function itemsFor(error: unknown, prefix: string | null): Item[] {
  const issues = ((error as { issues?: Issue[] } | null)?.issues ?? []) as Issue[];
  const items: Item[] = [];
  for (const issue of issues) {
    const path = pathOf(issue);
    if (issue.code === 'unrecognized_keys' && issue.keys?.length) {
      for (const k of issue.keys) {
        const field = [...path, k].join('.');
        items.push({ code: 'VALIDATION_ERROR', message: `Unknown field \`${field}\``, field });
      }
      continue;
    }
    const field = path.length ? path.join('.') : prefix;
    let message = issue.message;
    // zod says "Invalid input: expected string, received undefined" for a missing
    // value; an integrator wants to read that the field is required.
    if (issue.code === 'invalid_type' && /received undefined$/.test(message)) message = `${field ?? 'Value'} is required`;
    items.push({ code: 'VALIDATION_ERROR', message, field });
  }
  return items;
}

export function validationItems(err: RequestValidationError): Item[] {
  const items = [
    ...itemsFor(err.pathParams, null),
    ...itemsFor(err.headers, null),
    ...itemsFor(err.query, null),
    ...itemsFor(err.body, 'body'),
  ];
  return items.length ? items : [{ code: 'VALIDATION_ERROR', message: 'Request validation failed', field: null }];
}
