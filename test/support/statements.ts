import pg from 'pg';

/**
 * Statements sent to PostgreSQL while `fn` runs, but pg-boss's (every query of
 * the in-process server goes through pg's Client), and the round trips they
 * took: a statement sent while its connection had none of ours in flight starts
 * one; one sent while another is in flight (server/domain/db.ts `pipelined`)
 * rides with it if the client is in pipeline mode (else pg holds it back until
 * the answer). `texts` marks those with "+ ".
 */
export async function countStatements(fn: () => Promise<unknown>): Promise<{ n: number; trips: number; texts: string[] }> {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  const texts: string[] = [];
  const inFlight = new WeakMap<object, number>();
  let trips = 0;
  proto.query = function (this: { pipeline?: boolean }, ...args: unknown[]) {
    const q = args[0];
    const text = typeof q === 'string' ? q : ((q as { text?: string })?.text ?? '');
    // pg-boss's own polling and maintenance may land in the window; they are not the request's.
    if (/\bpgboss\./i.test(text)) return original.apply(this, args);
    const busy = inFlight.get(this) ?? 0;
    const rides = busy > 0 && this.pipeline === true;
    if (!rides) trips++;
    texts.push(`${rides ? '+ ' : ''}${text.slice(0, 60)}`);
    inFlight.set(this, busy + 1);
    const done = () => inFlight.set(this, (inFlight.get(this) ?? 1) - 1);
    const result = original.apply(this, args);
    if (result instanceof Promise) result.then(done, done);
    else done();
    return result;
  };
  try {
    await fn();
  } finally {
    proto.query = original;
  }
  return { n: texts.length, trips, texts };
}
