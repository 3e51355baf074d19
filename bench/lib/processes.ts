import { fork, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const benchDir = path.resolve(import.meta.dirname, '..');
export const repoRoot = path.resolve(benchDir, '..');

export interface BenchChild {
  name: string;
  proc: ChildProcess;
  pid: number;
  /** The first IPC message of one of `types`, or rejects when the child exits first. */
  message<T = Record<string, unknown>>(types: string | string[], timeoutMs?: number): Promise<T & { type: string }>;
  send(msg: unknown): void;
  /** SIGTERM, then SIGKILL after a grace period; resolves on exit. */
  stop(graceMs?: number): Promise<void>;
  /** The tail of its stderr (for failure reports). */
  stderr(): string;
}

/**
 * Starts a TypeScript entry point of bench/ (or server/) in its own Node
 * process with an IPC channel. Separate processes keep the load generator,
 * the servers and the receiver off each other's event loop, as they would be
 * in production. stdout goes to /dev/null: the service logs a JSON line per
 * request there, and paying for that write is part of what is measured.
 */
export function startChild(name: string, script: string, opts: { env?: Record<string, string>; args?: string[]; execArgv?: string[] } = {}): BenchChild {
  const proc = fork(path.resolve(repoRoot, script), opts.args ?? [], {
    cwd: repoRoot,
    env: { ...process.env, ...opts.env },
    execArgv: ['--import', './scripts/require-node24.mjs', ...(opts.execArgv ?? [])],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let errTail = '';
  proc.stderr!.on('data', (c: Buffer) => {
    errTail = (errTail + c.toString()).slice(-8000);
  });
  const messages: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  proc.on('message', (m: Record<string, unknown>) => {
    messages.push(m);
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  exited.then(() => {
    for (const w of waiters.splice(0)) w();
  });
  return {
    name,
    proc,
    pid: proc.pid!,
    message<T>(types: string | string[], timeoutMs = 300_000): Promise<T & { type: string }> {
      const wanted = Array.isArray(types) ? types : [types];
      return new Promise<T & { type: string }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name}: no '${wanted.join("' or '")}' message within ${timeoutMs} ms\n${errTail}`)), timeoutMs);
        const check = () => {
          const i = messages.findIndex((m) => wanted.includes(String(m.type)));
          if (i >= 0) {
            clearTimeout(timer);
            resolve(messages.splice(i, 1)[0] as T & { type: string });
            return;
          }
          if (proc.exitCode !== null || proc.signalCode !== null) {
            clearTimeout(timer);
            reject(new Error(`${name} exited (${proc.exitCode ?? proc.signalCode}) before '${wanted.join("' or '")}':\n${errTail}`));
            return;
          }
          waiters.push(check);
        };
        check();
      });
    },
    send(msg) {
      proc.send(msg as never);
    },
    async stop(graceMs = 15_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
    stderr: () => errTail,
  };
}

/** Resident set size of a process in MB, from /proc (Linux); null elsewhere. */
export function rssMb(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

export interface RssSample {
  maxMb: number | null;
  meanMb: number | null;
}

/** Samples a process's RSS every `everyMs` until stopped. */
export function sampleRss(pid: number, everyMs = 250): { stop(): RssSample } {
  const samples: number[] = [];
  const take = () => {
    const v = rssMb(pid);
    if (v !== null) samples.push(v);
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      if (samples.length === 0) return { maxMb: null, meanMb: null };
      return { maxMb: round1(Math.max(...samples)), meanMb: round1(samples.reduce((a, b) => a + b, 0) / samples.length) };
    },
  };
}

export const round1 = (n: number) => Math.round(n * 10) / 10;
export const round2 = (n: number) => Math.round(n * 100) / 100;

/** CPU time (user + system, every thread) a process has used, from /proc (Linux); 0 once it is gone. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / 100) * 1000;
  } catch {
    return 0;
  }
}

function readOrNull(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null; // the process ended between listing and reading
  }
}

/**
 * CPU time of the PostgreSQL listening on `port`: the postmaster, its live
 * children (the backends) and the children it has already reaped (cutime and
 * cstime of the postmaster), so a backend that exits between two readings does
 * not take its CPU time out of the total.
 */
export function postgresCpuMs(port: string): number {
  const pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  const master = pids.find((p) => {
    const args = readOrNull(`/proc/${p}/cmdline`)?.split('\0') ?? [];
    return args.some((a) => a.endsWith('postgres')) && args.includes(port);
  });
  if (!master) return 0;
  let total = 0;
  for (const p of pids) {
    const status = readOrNull(`/proc/${p}/status`);
    const parent = status && /PPid:\s+(\d+)/.exec(status)?.[1];
    if (p === master || parent === master) total += processCpuMs(Number(p));
  }
  const stat = readOrNull(`/proc/${master}/stat`);
  if (stat) {
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    total += ((Number(fields[13]) + Number(fields[14])) / 100) * 1000;
  }
  return total;
}
