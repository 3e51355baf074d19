import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the reliability suites drop their counts for the run's summary. */
    reliabilityDir: string;
  }
}

interface Counts {
  suite: string;
  inputs?: number;
  races?: number;
  faults?: number;
  lost?: number;
}

/**
 * Prints one summary of the reliability suites at the end of the run: inputs
 * tried, races run, faults injected, and whether anything was lost. Each
 * suite file reports its own counts (test/support/reliability-summary.ts).
 */
export default function setup(project: TestProject) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pc-reliability-'));
  project.provide('reliabilityDir', dir);
  return () => {
    const rows: Counts[] = readdirSync(dir).flatMap((f) =>
      readFileSync(path.join(dir, f), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Counts),
    );
    rmSync(dir, { recursive: true, force: true });
    if (!rows.length) return;
    const sum = (k: 'inputs' | 'races' | 'faults' | 'lost') => rows.reduce((a, r) => a + (r[k] ?? 0), 0);
    const suites = [...new Set(rows.map((r) => r.suite))].sort().join(', ');
    process.stdout.write(
      [
        '',
        '== reliability summary',
        `   hostile inputs tried: ${sum('inputs')}`,
        `   races run:            ${sum('races')}`,
        `   faults injected:      ${sum('faults')}`,
        `   lost or done twice:   ${sum('lost')}${sum('lost') === 0 ? ' (nothing lost)' : ' (SOMETHING WAS LOST)'}`,
        `   from: ${suites}`,
        '',
      ].join('\n') + '\n',
    );
  };
}
