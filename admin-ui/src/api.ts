import { initClient, tsRestFetchApi } from '@ts-rest/core';
// contract.admin itself (the root contract's `admin` entry), imported from its own
// module so the bundle does not carry the merchant, device and checkout routes.
import { adminContract } from '../../contract/admin/index.ts';

/**
 * The console's only way to the server: a ts-rest client over the admin contract,
 * so a route or schema change breaks `npm run typecheck` here as it does in the
 * server. The session cookie goes with every call (same origin); mutations carry
 * the session's CSRF token, which the server compares with the one it stored.
 */
let csrfToken: string | null = null;
let onSessionLost: (() => void) | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when an authenticated call answers 401: the session expired or was ended elsewhere. */
export function onUnauthorized(handler: (() => void) | null): void {
  onSessionLost = handler;
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

export const api = initClient(adminContract, {
  baseUrl: '',
  credentials: 'include',
  // The server validates every response against the contract already.
  validateResponse: false,
  api: async (args) => {
    const headers = { ...args.headers };
    if (!SAFE_METHODS.has(args.method.toUpperCase()) && csrfToken) headers['x-csrf-token'] = csrfToken;
    const res = await tsRestFetchApi({ ...args, headers });
    if (res.status === 401 && !args.path.includes('/api/admin/v1/session')) onSessionLost?.();
    return res;
  },
});

interface ErrorBody {
  error?: string;
  errors?: Array<{ code: string; message: string; field: string | null }>;
  request_id?: string;
}

/** A refused call, with the server's error code (`INVALID_STATE`, `FORBIDDEN`...) and message. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly field: string | null;
  readonly requestId: string | undefined;
  constructor(status: number, body: unknown) {
    const b = (body && typeof body === 'object' ? body : {}) as ErrorBody;
    const first = b.errors?.[0];
    super(first?.message ?? b.error ?? `The server answered ${status}`);
    this.status = status;
    this.code = first?.code ?? (status >= 500 ? 'INTERNAL_ERROR' : 'HTTP_' + status);
    this.field = first?.field ?? null;
    this.requestId = b.request_id;
  }
}

type Success<R> = Extract<R, { status: 200 | 201 | 204 }>;

/** The success body of a typed call, or an ApiError carrying the server's code. */
export async function ok<R extends { status: number; body: unknown }>(call: Promise<R>): Promise<Success<R>['body']> {
  let res: R;
  try {
    res = await call;
  } catch (err) {
    throw new ApiError(0, { error: `The service could not be reached (${err instanceof Error ? err.message : String(err)})` });
  }
  if (res.status >= 200 && res.status < 300) return (res as Success<R>).body;
  throw new ApiError(res.status, res.body);
}

/** Words for an operator, from an error of any kind. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.code === 'FORBIDDEN') return 'Your role does not allow this action (refused by the server).';
    if (err.code === 'CSRF_TOKEN_INVALID') return 'Your session token is out of date: reload the page and try again.';
    if (err.status === 0) return err.message;
    return `${err.message}${err.field ? ` (${err.field})` : ''} [${err.code}]`;
  }
  return err instanceof Error ? err.message : String(err);
}
