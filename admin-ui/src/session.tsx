import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { OperatorRole } from '../../contract/vocabulary.ts';
import { ApiError, api, ok, onUnauthorized, setCsrfToken } from './api.ts';

export type Role = OperatorRole;
export type Operator = { id: string; email: string; name: string; role: Role; brand_ids: number[] | null; totp_enabled: boolean };

/** What a role may do, as the server enforces it (the console only hides what would be refused). */
export type Permission = 'read' | 'operate' | 'own';
const RANK: Record<Role, number> = { viewer: 0, operator: 1, owner: 2 };
const NEEDS: Record<Permission, number> = { read: 0, operate: 1, own: 2 };

type State =
  | { status: 'loading' }
  | { status: 'anonymous'; notice: string | null }
  | { status: 'signed-in'; operator: Operator };

interface SessionApi {
  state: State;
  login(input: { email: string; password: string; totp_code?: string }): Promise<void>;
  logout(): Promise<void>;
  can(permission: Permission): boolean;
}

const SessionContext = createContext<SessionApi | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<State>({ status: 'loading' });
  const stateRef = useRef(state);
  stateRef.current = state;
  const queryClient = useQueryClient();

  const signOut = useCallback(
    (notice: string | null) => {
      setCsrfToken(null);
      queryClient.clear();
      setState({ status: 'anonymous', notice });
    },
    [queryClient],
  );

  useEffect(() => {
    let live = true;
    // Only a signed-in console can lose its session; a late answer after logout is not news.
    onUnauthorized(() => {
      if (stateRef.current.status === 'signed-in') signOut('Your session has expired. Log in again.');
    });
    ok(api.session.get())
      .then((res) => {
        if (!live) return;
        setCsrfToken(res.data.csrf_token);
        setState({ status: 'signed-in', operator: res.data.operator });
      })
      .catch((err: unknown) => {
        if (!live) return;
        const down = !(err instanceof ApiError) || err.status === 0 || err.status >= 500;
        setState({ status: 'anonymous', notice: down ? 'The service could not be reached; log in to try again.' : null });
      });
    return () => {
      live = false;
      onUnauthorized(null);
    };
  }, [signOut]);

  const value = useMemo<SessionApi>(
    () => ({
      state,
      async login(input) {
        const res = await ok(api.session.login({ body: input }));
        setCsrfToken(res.data.csrf_token);
        queryClient.clear();
        setState({ status: 'signed-in', operator: res.data.operator });
      },
      async logout() {
        // Even if the server cannot be reached, forget the session here.
        await ok(api.session.logout()).catch(() => undefined);
        signOut('You have logged out.');
      },
      can(permission) {
        return state.status === 'signed-in' && RANK[state.operator.role] >= NEEDS[permission];
      },
    }),
    [state, queryClient, signOut],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionApi {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside SessionProvider');
  return s;
}

/** The signed-in operator (screens only render inside the signed-in layout). */
export function useOperator(): Operator {
  const { state } = useSession();
  if (state.status !== 'signed-in') throw new Error('not signed in');
  return state.operator;
}
