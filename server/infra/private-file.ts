import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

/**
 * Writes a file only its owner may read (0600), atomically: the text goes to a
 * new temporary file created with that mode (O_EXCL, so a file or symlink
 * planted at that name is never followed or reused), is flushed to disk, and
 * is renamed over the target. No reader ever sees a half-written file or a
 * moment of wider permissions, and a crash leaves the old file whole. The
 * umask can only narrow the mode. The directory is created 0700 when missing.
 */
export function writePrivateFile(file: string, text: string): void {
  const dir = path.dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}
