import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINUTE_SWEEPS_QUEUE, minuteSweeps, runMinuteSweepsNow, type MinuteSweep } from '../../server/infra/jobs/scheduled.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { waitForJobFinished } from '../support/wait.ts';

// Workers off: the minute sweeps started here are the only worker of the queue, with sweeps of this file's own.
let t: TestContext;
let stop: (() => Promise<void>) | undefined;
const ran: string[] = [];
let running = 0;
let overlapped = false;

const sweep = (name: string, fail = false): MinuteSweep => ({
  name,
  async run() {
    if (running++) overlapped = true;
    await new Promise((r) => setTimeout(r, 20));
    running--;
    ran.push(name);
    if (fail) throw new Error(`${name} broke`);
  },
});

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  const boss = t.runtime.deps.boss;
  // What a database kept from before the minute sweeps shared a schedule: a queue and a schedule of its own.
  await boss.createQueue('legacy-sweep', { policy: 'exclusive' });
  await boss.schedule('legacy-sweep', '* * * * *');
  const registration = minuteSweeps([sweep('first'), sweep('breaks', true), sweep('legacy-sweep'), sweep('last')]);
  await boss.createQueue(registration.queue.name, registration.queue);
  ({ stop } = await registration.start!(t.runtime.deps));
});
afterAll(async () => {
  await stop?.();
  await t?.close();
});

const finished = (id: string) => waitForJobFinished(t.runtime.deps.boss, MINUTE_SWEEPS_QUEUE, id);

describe('the minute sweeps share one schedule', () => {
  it('one schedule every minute; the schedule and queue a sweep had of its own are removed', async () => {
    const boss = t.runtime.deps.boss;
    const schedules = (await boss.getSchedules()).map((s) => [s.name, s.cron]);
    expect(schedules).toContainEqual([MINUTE_SWEEPS_QUEUE, '* * * * *']);
    expect(schedules.map(([n]) => n)).not.toContain('legacy-sweep');
    expect(await boss.getQueue('legacy-sweep')).toBeNull();
  });

  it('a run takes the sweeps one at a time in order; one that fails does not stop the rest, and fails the job naming it', async () => {
    ran.length = 0;
    overlapped = false;
    const id = await t.runtime.deps.boss.send(MINUTE_SWEEPS_QUEUE, {});
    const job = await finished(id!);
    expect(ran).toEqual(['first', 'breaks', 'legacy-sweep', 'last']);
    expect(overlapped).toBe(false);
    expect(job?.state).toBe('failed');
    expect(JSON.stringify(job?.output)).toContain('minute sweeps failed: breaks');
    expect(t.logs.some((l) => l.includes('minute sweep failed') && l.includes('"sweep":"breaks"') && l.includes('breaks broke'))).toBe(true);
  });

  it('on demand: only the named sweeps run', async () => {
    ran.length = 0;
    const job = await finished(await runMinuteSweepsNow(t.runtime.deps.boss, ['last', 'first']));
    expect(job?.state).toBe('completed');
    expect(ran).toEqual(['first', 'last']);
  });

  it('a name that is no sweep fails the job and runs nothing', async () => {
    ran.length = 0;
    const job = await finished(await runMinuteSweepsNow(t.runtime.deps.boss, ['first', 'nope']));
    expect(job?.state).toBe('failed');
    expect(JSON.stringify(job?.output)).toContain('no sweep named nope');
    expect(ran).toEqual([]);
  });

  it('a payload that is not a list of names fails the job and runs nothing', async () => {
    ran.length = 0;
    const id = await t.runtime.deps.boss.send(MINUTE_SWEEPS_QUEUE, { only: 'first' }, { singletonKey: 'bad-payload' });
    const job = await finished(id!);
    expect(job?.state).toBe('failed');
    expect(JSON.stringify(job?.output)).toContain('bad payload');
    expect(ran).toEqual([]);
  });
});
