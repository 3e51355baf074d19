import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { deliverFirstRunBanner } from '../../server/first-run.ts';
import { createLogger } from '../../server/infra/logger.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'pc-first-run-'));
  dirs.push(d);
  return d;
};

function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  return { lines, logger: createLogger({ level: 'info', destination: sink }) };
}

const banner = 'First run\n  Admin token:        adm_SECRET\n  Demo brand API key: pk_test_SECRET';

describe('first-run banner delivery', () => {
  it('on a terminal: printed there, no file, nothing in the log', () => {
    const dataDir = tempDir();
    const { lines, logger } = capture();
    let printed = '';
    const res = deliverFirstRunBanner(banner, { isTTY: true, write: (t) => (printed += t), dataDir, logger });
    expect(res.file).toBeNull();
    expect(printed).toBe(`${banner}\n`);
    expect(readdirSync(dataDir)).toEqual([]);
    expect(lines).toEqual([]);
  });

  it('not a terminal: written to DATA_DIR/first-run.txt with mode 0600 (also over an older, wider file); one log line without secrets', () => {
    const dataDir = tempDir();
    const file = path.join(dataDir, 'first-run.txt');
    writeFileSync(file, 'stale', { mode: 0o644 });
    const { lines, logger } = capture();
    let printed = '';
    const res = deliverFirstRunBanner(banner, { isTTY: false, write: (t) => (printed += t), dataDir, logger });
    expect(res.file).toBe(file);
    expect(printed).toBe('');
    expect(readFileSync(file, 'utf8')).toBe(`${banner}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // No temporary file is left beside it.
    expect(readdirSync(dataDir)).toEqual(['first-run.txt']);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!).file).toBe(file);
    expect(lines[0]).not.toContain('SECRET');
  });

  it('creates DATA_DIR (0700) when it does not exist yet', () => {
    const dataDir = path.join(tempDir(), 'nested', 'data');
    const { logger } = capture();
    deliverFirstRunBanner(banner, { isTTY: false, write: () => undefined, dataDir, logger });
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(dataDir, 'first-run.txt')).mode & 0o777).toBe(0o600);
  });

  it('0600 also for a non-root user with a permissive umask (the mode is set at creation, not after)', () => {
    const dir = tempDir();
    chmodSync(dir, 0o777);
    const target = path.join(dir, 'data', 'first-run.txt');
    const root = path.resolve(import.meta.dirname, '../..');
    // As root, run the write as `nobody`; otherwise as ourselves (already not root).
    const ids = process.getuid?.() === 0 ? { uid: Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' })) } : {};
    const script = `const m = await import('./server/infra/private-file.ts'); m.writePrivateFile(${JSON.stringify(target)}, 'secret');`;
    const res = spawnSync('sh', ['-c', 'umask 000 && exec "$0" --input-type=module -e "$1"', process.execPath, script], { cwd: root, encoding: 'utf8', ...ids });
    expect(res.status, res.stderr).toBe(0);
    const st = statSync(target);
    expect(st.mode & 0o777).toBe(0o600);
    expect(st.uid).not.toBe(0);
    expect(statSync(path.dirname(target)).mode & 0o777).toBe(0o700);
  });
});
