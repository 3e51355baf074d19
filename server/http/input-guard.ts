import type { RequestHandler } from 'express';
import { AppError } from '../../contract/common/errors.ts';

export interface BadText {
  /** Dotted path of the value (`customer.name`, a query or path parameter name). */
  field: string;
  message: string;
}

const NUL_MESSAGE = 'Must not contain NUL characters';
const SURROGATE_MESSAGE = 'Must be valid Unicode text (no unpaired surrogates)';

function badText(s: string): string | null {
  if (s.includes('\u0000')) return NUL_MESSAGE;
  if (!s.isWellFormed()) return SURROGATE_MESSAGE;
  return null;
}

/**
 * The first string (value or object key) that PostgreSQL cannot store as sent:
 * a NUL is a protocol error that drops the pooled connection, and an unpaired
 * surrogate is silently turned into U+FFFD by the driver, so the row would not
 * hold what was sent. Iterative, so a deeply nested body cannot overflow the stack.
 */
export function findBadText(value: unknown, root: string | null = null): BadText | null {
  // Paths are kept as parent links and only spelled out on a hit: copying them
  // per level would be quadratic in the nesting depth.
  interface Node {
    value: unknown;
    key: string | null;
    parent: Node | null;
  }
  const pathOf = (n: Node | null, last?: string): string => {
    const parts: string[] = last === undefined ? [] : [last];
    for (let cur = n; cur; cur = cur.parent) if (cur.key !== null) parts.push(cur.key);
    return parts.reverse().join('.') || 'body';
  };
  const stack: Node[] = [{ value, key: root, parent: null }];
  while (stack.length) {
    const node = stack.pop()!;
    const v = node.value;
    if (typeof v === 'string') {
      const message = badText(v);
      if (message) return { field: pathOf(node), message };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], key: String(i), parent: node });
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        const message = badText(k);
        if (message) return { field: pathOf(node, k.replaceAll('\u0000', '?').toWellFormed()), message };
        stack.push({ value: child, key: k, parent: node });
      }
    }
  }
  return null;
}

/**
 * Refuses path parameters, query values and JSON bodies holding text the
 * database cannot store faithfully, as a 400 naming the field, before any
 * handler runs. Runs as route middleware, where the path parameters are known.
 */
export const inputGuard: RequestHandler = (req, _res, next) => {
  for (const [name, v] of Object.entries(req.params ?? {})) {
    const bad = findBadText(v, name);
    if (bad) return next(new AppError('VALIDATION_ERROR', bad.message, { field: bad.field }));
  }
  const bad = findBadText(req.query ?? {}) ?? findBadText(req.body);
  if (bad) return next(new AppError('VALIDATION_ERROR', bad.message, { field: bad.field }));
  next();
};
