import { createContext, useContext, useState, type ReactNode } from 'react';
import type { Mode } from '../../contract/vocabulary.ts';

export type { Mode };
const KEY = 'paycollect.console.mode';

const ModeContext = createContext<{ mode: Mode; setMode(m: Mode): void } | null>(null);

/**
 * Which mode's objects the screens list (every admin object has one). Kept per
 * browser, so an operator who reviews test payments is not switched back on reload.
 */
export function ModeProvider({ children }: { children: ReactNode }) {
  const [mode, setModeState] = useState<Mode>(() => (window.localStorage.getItem(KEY) === 'test' ? 'test' : 'live'));
  const setMode = (m: Mode) => {
    window.localStorage.setItem(KEY, m);
    setModeState(m);
  };
  return <ModeContext.Provider value={{ mode, setMode }}>{children}</ModeContext.Provider>;
}

export function useMode() {
  const m = useContext(ModeContext);
  if (!m) throw new Error('useMode outside ModeProvider');
  return m;
}
