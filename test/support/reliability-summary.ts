import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';

/** Adds a suite's counts to the run's reliability summary (printed at the end by reliability-setup.ts). */
export function recordReliability(counts: { suite: string; inputs?: number; races?: number; faults?: number; lost?: number }): void {
  const dir = inject('reliabilityDir');
  if (!dir) return;
  appendFileSync(path.join(dir, `${process.pid}.jsonl`), `${JSON.stringify(counts)}\n`);
}
