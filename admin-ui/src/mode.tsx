import { createContext, useContext, useEffect, useRef, useState, type ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { Mode } from '../../contract/vocabulary.ts';
import { api, ok } from './api.ts';

export type { Mode };
const KEY = 'paycollect.console.mode';

interface ModeState {
  mode: Mode;
  /** The operator's choice: kept per browser and never overridden. */
  setMode(m: Mode): void;
  /** True once the operator picked a mode in this browser. */
  chosen: boolean;
  /** The console's own pick while the operator has made none (not stored). */
  suggest(m: Mode): void;
}

const ModeContext = createContext<ModeState | null>(null);

/**
 * Which mode's objects the screens list (every admin object has one). Kept per
 * browser, so an operator who reviews test payments is not switched back on reload.
 * Without a choice the console opens where work waits (see useOpenWhereWorkWaits).
 */
export function ModeProvider({ children }: { children: ReactNode }) {
  const stored = () => window.localStorage.getItem(KEY);
  const [mode, setModeState] = useState<Mode>(() => (stored() === 'test' ? 'test' : 'live'));
  const [chosen, setChosen] = useState(() => stored() === 'live' || stored() === 'test');
  const setMode = (m: Mode) => {
    window.localStorage.setItem(KEY, m);
    setChosen(true);
    setModeState(m);
  };
  const suggest = (m: Mode) => {
    if (!chosen) setModeState(m);
  };
  return <ModeContext.Provider value={{ mode, setMode, chosen, suggest }}>{children}</ModeContext.Provider>;
}

export function useMode() {
  const m = useContext(ModeContext);
  if (!m) throw new Error('useMode outside ModeProvider');
  return m;
}

const WAITING_POLL_MS = 30_000;

/**
 * Payments and SMS awaiting review per mode, summed over the operator's brands:
 * the overview carries both modes' counts (`waiting_by_mode`), so this is the
 * overview screen's own query and cache entry. Undefined while loading or refused.
 */
export function useWaitingByMode(): Record<Mode, number | undefined> {
  const { mode } = useMode();
  const overview = useQuery({
    queryKey: ['overview', mode],
    refetchInterval: WAITING_POLL_MS,
    queryFn: async () => (await ok(api.overview.get({ query: { mode } }))).data,
  });
  const sum = (m: Mode) => overview.data?.reduce((n, b) => n + b.waiting_by_mode[m], 0);
  return { live: sum('live'), test: sum('test') };
}

/**
 * An operator who never picked a mode is taken, once, to the mode where work
 * waits: a new operator otherwise opened an empty live console while the demo's
 * payments waited in test. A choice the operator made is always kept.
 */
export function useOpenWhereWorkWaits(waiting: Record<Mode, number | undefined>): void {
  const { mode, chosen, suggest } = useMode();
  const { live, test } = waiting;
  const done = useRef(false);
  useEffect(() => {
    if (done.current || chosen || live === undefined || test === undefined) return;
    done.current = true;
    const here = mode === 'live' ? live : test;
    const there = mode === 'live' ? test : live;
    if (here === 0 && there > 0) suggest(mode === 'live' ? 'test' : 'live');
  }, [live, test, chosen, mode, suggest]);
}
