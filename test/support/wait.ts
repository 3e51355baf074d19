/**
 * Polls `read` until `done` holds or `ms` pass, and returns the last value read,
 * so the caller's assertion on it shows what was there when time ran out.
 */
export async function waitFor<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 20_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}
