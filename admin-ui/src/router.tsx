import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

/**
 * A few lines of history-API routing: the console has a dozen flat screens, so a
 * router library would add more than it saves. Paths are below /admin; the server
 * answers index.html for every /admin/* path, so a reload lands on the same screen.
 */
export const BASE = '/admin';

function subscribe(cb: () => void): () => void {
  window.addEventListener('popstate', cb);
  return () => window.removeEventListener('popstate', cb);
}
const snapshot = () => window.location.pathname + window.location.search;

/** The current path below /admin (`/`, `/review`, `/payments/12`) and its query. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const full = useSyncExternalStore(subscribe, snapshot);
  const [pathname, search = ''] = full.split('?');
  const rel = pathname!.startsWith(BASE) ? pathname!.slice(BASE.length) : pathname!;
  return { path: rel === '' ? '/' : rel.replace(/\/+$/, '') || '/', query: new URLSearchParams(search) };
}

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const url = BASE + (to === '/' ? '/' : to);
  if (opts.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

export function Link({ to, onClick, ...rest }: AnchorHTMLAttributes<HTMLAnchorElement> & { to: string }) {
  return (
    <a
      {...rest}
      href={BASE + (to === '/' ? '/' : to)}
      onClick={(e: MouseEvent<HTMLAnchorElement>) => {
        onClick?.(e);
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(to);
      }}
    />
  );
}

/** Matches `/payments/:id` against a path; returns the params or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/');
  const a = path.split('/');
  if (p.length !== a.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i]!.startsWith(':')) params[p[i]!.slice(1)] = decodeURIComponent(a[i]!);
    else if (p[i] !== a[i]) return null;
  }
  return params;
}
