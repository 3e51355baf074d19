/**
 * A companion-device simulator built only on the device SDK: the reference for
 * the Android app and the demo's tool. Run `npm run device-sim -- --help`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import {
  PaycollectDevice, PaycollectError, PairingRequiredError, VERSION, answerBackfillRequests, sameSender, screenSms, screenedRanges, SmsSequencer,
  type BackfillWindow, type DeviceTokens, type SmsFilterRules, type SmsSequenceState,
} from '../clients/device/index.ts';

interface State {
  baseUrl: string;
  fingerprint: string;
  deviceId?: string;
  deviceName?: string;
  pairedAt?: string;
  tokens: DeviceTokens | null;
  /** Every SMS the simulated phone received (forwarded or missed), for backfill requests. */
  inbox?: InboxSms[];
  /** Set when paired with `--sequences`: the per-SIM sequence counters (docs/recovery.md "Sequence numbers"). */
  sequences?: SmsSequenceState;
}

export interface InboxSms {
  device_message_id: string;
  sender: string;
  body: string;
  received_at: string;
  sim_slot?: number | null;
  receiving_number?: string | null;
  /** With sequences on: the number the phone gave it, its epoch, and whether its filter rules screened it out. */
  sequence?: number;
  sequence_epoch?: string;
  screened?: boolean;
}

/** The message as forwarded (the contract takes no other field). */
function wire(m: InboxSms) {
  return {
    device_message_id: m.device_message_id,
    sender: m.sender,
    body: m.body,
    received_at: m.received_at,
    ...(m.sim_slot === undefined ? {} : { sim_slot: m.sim_slot }),
    ...(m.receiving_number == null ? {} : { receiving_number: m.receiving_number }),
    ...(m.sequence === undefined ? {} : { sequence: m.sequence }),
  };
}

/** Groups of messages that share a sequence epoch (one request names one epoch); unnumbered ones go with any. */
function byEpoch(messages: InboxSms[]): Array<{ epoch: string | undefined; messages: InboxSms[] }> {
  const groups = new Map<string | undefined, InboxSms[]>();
  for (const m of messages) groups.set(m.sequence_epoch, [...(groups.get(m.sequence_epoch) ?? []), m]);
  return [...groups].map(([epoch, list]) => ({ epoch, messages: list }));
}

/** Numbers SMS of allowed senders with the state file's counters and saves them before anything is forwarded (re-read first, as addToInbox). */
function numberSms(file: string, messages: InboxSms[]): void {
  const current = loadState(file);
  if (!current?.sequences) return;
  const seq = new SmsSequencer(current.sequences);
  for (const m of messages) Object.assign(m, { sequence: seq.next(m.sim_slot ?? null), sequence_epoch: seq.epoch });
  saveState(file, { ...current, sequences: seq.state() });
}

/** Adds messages to the state file's inbox (re-read first: a token refresh may have rewritten the file). */
function addToInbox(file: string, messages: InboxSms[]): void {
  const current = loadState(file);
  if (!current) return;
  const known = new Set((current.inbox ?? []).map((m) => m.device_message_id));
  saveState(file, { ...current, inbox: [...(current.inbox ?? []), ...messages.filter((m) => !known.has(m.device_message_id))] });
}

interface Io {
  out(line: string): void;
  err(line: string): void;
}

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, string | boolean | undefined>;

class UsageError extends Error {}

const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';
const DEFAULT_STATE = path.join('.data', 'device-sim.json');
/** The service takes at most 50 SMS per call (contract: MAX_SMS_BATCH). */
const SMS_BATCH = 50;

const globalOptions: Options = {
  state: { type: 'string' },
  'base-url': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};
const globalHelp = `  --state <path>      State file with the tokens (default ${DEFAULT_STATE}; kept mode 0600)
  --base-url <url>    Service URL (default: the one used when pairing, else ${DEFAULT_BASE_URL})
  --json              Print one JSON document instead of text
  -h, --help          This help`;

interface Command {
  summary: string;
  usage: string;
  options: Options;
  run(ctx: Ctx, v: Values): Promise<unknown>;
}

interface Ctx {
  io: Io;
  json: boolean;
  statePath: string;
  state: State | null;
  baseUrl: string;
  device(): PaycollectDevice;
  print(human: string): void;
}

function loadState(file: string): State | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as State;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new UsageError(`cannot read the state file ${file}: ${(err as Error).message}`);
  }
}

/** Written whole and renamed into place: a crash mid-write never loses the rotated refresh token. */
function saveState(file: string, state: State): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

function need(v: Values, name: string): string {
  const value = v[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value;
}

function intOption(v: Values, name: string, min: number, max: number): number | undefined {
  if (v[name] === undefined) return undefined;
  const n = Number(v[name]);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max}`);
  return n;
}

interface SmsInput {
  sender: string;
  body: string;
  received_at?: string;
  device_message_id?: string;
  sim_slot?: number | null;
  receiving_number?: string | null;
}

/** A JSON array of SMS, or `{ messages: [...] }` (the shape of test/fixtures/sms/*.json); `from` may stand for `sender`. */
function readSmsFile(file: string): SmsInput[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { messages?: unknown })?.messages;
  if (!Array.isArray(list) || list.length === 0) throw new UsageError(`${file} must hold a non-empty array of SMS (or { "messages": [...] })`);
  return list.map((m, i) => {
    const r = m as Record<string, unknown>;
    const sender = r.sender ?? r.from;
    if (typeof sender !== 'string' || typeof r.body !== 'string') throw new UsageError(`${file}: message ${i + 1} needs "sender" (or "from") and "body"`);
    return {
      sender,
      body: r.body,
      received_at: typeof r.received_at === 'string' ? r.received_at : undefined,
      device_message_id: typeof r.device_message_id === 'string' ? r.device_message_id : undefined,
      sim_slot: typeof r.sim_slot === 'number' ? r.sim_slot : undefined,
      receiving_number: typeof r.receiving_number === 'string' ? r.receiving_number : undefined,
    };
  });
}

const windowJson = (w: BackfillWindow) => ({ id: w.id, reason: w.reason, from: w.from.toISOString(), to: w.to.toISOString(), senders: w.senders });

/** What a backfill command asks of the inbox: received in its window, from one of its senders (when it names some), allowed by the filter rules. */
export function inboxWindow(inbox: readonly InboxSms[], w: BackfillWindow, rules: SmsFilterRules): InboxSms[] {
  return inbox.filter((m) => {
    const at = Date.parse(m.received_at);
    if (at < w.from.getTime() || at > w.to.getTime()) return false;
    if (w.senders && !w.senders.some((s) => sameSender(s, m.sender))) return false;
    return screenSms(rules, m).forward;
  });
}

/**
 * Answers every open backfill command from the simulated phone's inbox:
 * re-forwards the window's SMS with their original message ids (what the
 * service has is answered as stored), then completes the command.
 */
export async function answerFromInbox(device: PaycollectDevice, inbox: readonly InboxSms[], print: (line: string) => void = () => {}): Promise<BackfillWindow[]> {
  const rules = await device.filterRules.get();
  return answerBackfillRequests(device, async (w) => {
    if (w.sequences) {
      // A sequence gap: exactly the SMS numbered so; those the rules screen out are reported screened.
      const { simSlot, epoch, numbers } = w.sequences;
      const wanted = inbox.filter((m) => m.sequence !== undefined && m.sequence_epoch === epoch && (m.sim_slot ?? null) === simSlot && numbers.includes(m.sequence));
      const screened = wanted.filter((m) => !screenSms(rules, m).forward);
      const resend = wanted.filter((m) => screenSms(rules, m).forward);
      const ranges = screenedRanges(screened.map((m) => ({ simSlot: m.sim_slot, sequence: m.sequence! })));
      const chunks = resend.length > 0 ? Array.from({ length: Math.ceil(resend.length / SMS_BATCH) }, (_, k) => resend.slice(k * SMS_BATCH, (k + 1) * SMS_BATCH)) : ranges.length > 0 ? [[]] : [];
      for (const [k, chunk] of chunks.entries()) {
        await device.smsMessages.forward(
          { messages: chunk.map(wire), sequence_epoch: epoch, ...(k === 0 && ranges.length > 0 ? { screened_sequences: ranges } : {}), device_time: new Date().toISOString() },
          { idempotencyKey: `sim-backfill-${w.id}-${k}` },
        );
      }
      print(`backfill ${w.id} (${w.reason}): re-sent ${resend.length} SMS numbered ${numbers.join(', ')}${screened.length ? ` (${screened.length} screened)` : ''}`);
      return resend.length;
    }
    const window = inboxWindow(inbox, w, rules);
    for (const g of byEpoch(window)) {
      for (let i = 0; i < g.messages.length; i += SMS_BATCH) {
        const batch = g.messages.slice(i, i + SMS_BATCH).map(wire);
        // Original message ids: what the service already has is answered as stored, never counted twice.
        await device.smsMessages.forward(
          { messages: batch, device_time: new Date().toISOString(), ...(g.epoch === undefined ? {} : { sequence_epoch: g.epoch }) },
          { idempotencyKey: `sim-backfill-${w.id}-${g.epoch ?? ''}-${i}` },
        );
      }
    }
    const from = w.senders ? ` from ${w.senders.join(', ')}` : '';
    print(`backfill ${w.id} (${w.reason}): re-sent ${window.length} SMS${from} received ${w.from.toISOString()} .. ${w.to.toISOString()}`);
    return window.length;
  });
}

/**
 * One turn of the app's background loop: when push notifications are unread
 * (the service nudges with one), mark them read and answer the open commands.
 * Returns the windows answered.
 */
export async function pollOnce(device: PaycollectDevice, inbox: () => readonly InboxSms[], print: (line: string) => void = () => {}): Promise<BackfillWindow[]> {
  const unread = await device.notifications.listUnread();
  if (unread.length === 0) return [];
  await device.notifications.acknowledge({ ids: unread.map((n) => n.id) });
  for (const n of unread) print(`push #${n.id}: ${n.title}`);
  return answerFromInbox(device, inbox(), print);
}

const commands: Record<string, Command> = {
  pair: {
    summary: 'Pair with a one-time code from the merchant panel and store the tokens',
    usage: `pair --code <code> [--name <device name>] [--fingerprint <hash>] [--app-version <v>] [--sequences]`,
    options: { code: { type: 'string' }, name: { type: 'string' }, fingerprint: { type: 'string' }, 'app-version': { type: 'string' }, sequences: { type: 'boolean' } },
    async run(ctx, v) {
      const code = need(v, 'code');
      // Re-pairing the same simulated phone keeps its fingerprint, like a real phone would.
      const fingerprint = (v.fingerprint as string | undefined) ?? ctx.state?.fingerprint ?? randomBytes(32).toString('hex');
      const name = (v.name as string | undefined) ?? 'Device simulator';
      const state: State = { baseUrl: ctx.baseUrl, fingerprint, deviceName: name, tokens: null };
      // `--sequences`: an app that numbers its SMS per SIM; a new pairing is a new install, so a new epoch.
      if (v.sequences) state.sequences = new SmsSequencer(null).state();
      const device = new PaycollectDevice({ baseUrl: ctx.baseUrl, fingerprint, onTokens: (tokens) => saveState(ctx.statePath, { ...state, tokens }) });
      const paired = await device.pair(code, { device_name: name, app_version: (v['app-version'] as string | undefined) ?? `sim-${VERSION}` });
      Object.assign(state, { deviceId: paired.device_id, pairedAt: new Date().toISOString(), tokens: device.getTokens() });
      saveState(ctx.statePath, state);
      ctx.print(`paired as ${paired.device_id} ("${name}") with ${ctx.baseUrl}; tokens stored in ${ctx.statePath}`);
      return { device_id: paired.device_id, name, base_url: ctx.baseUrl, state: ctx.statePath, expires_in: paired.expires_in };
    },
  },
  heartbeat: {
    summary: 'Report that the device is alive (with battery, network and what breaks forwarding: SMS permission, battery optimisation)',
    usage: 'heartbeat [--battery <0-100>] [--charging] [--network <wifi|cellular|...>] [--app-version <v>] [--no-sms-permission] [--battery-optimized]',
    options: {
      battery: { type: 'string' },
      charging: { type: 'boolean' },
      network: { type: 'string' },
      'app-version': { type: 'string' },
      'no-sms-permission': { type: 'boolean' },
      'battery-optimized': { type: 'boolean' },
    },
    async run(ctx, v) {
      const result = await ctx.device().devices.heartbeat({
        battery_level: intOption(v, 'battery', 0, 100),
        is_charging: v.charging as boolean | undefined,
        network: v.network as string | undefined,
        app_version: v['app-version'] as string | undefined,
        // A simulated phone has its permission and is exempt from battery optimisation unless told otherwise.
        sms_permission: v['no-sms-permission'] !== true,
        battery_optimization_ignored: v['battery-optimized'] !== true,
        // The phone's clock, from which the service estimates its offset (docs/matching.md).
        device_time: new Date().toISOString(),
      });
      ctx.print(`heartbeat ok, server time ${result.server_time}`);
      return result;
    },
  },
  queue: {
    summary: 'Pull outbound SMS waiting for this device and report each one',
    usage: 'queue [--report sent|failed|delivered|none] [--reason <why failed>]',
    options: { report: { type: 'string' }, reason: { type: 'string' } },
    async run(ctx, v) {
      const report = (v.report as string | undefined) ?? 'sent';
      if (!['sent', 'failed', 'delivered', 'none'].includes(report)) throw new UsageError('--report must be sent, failed, delivered or none');
      if (report === 'failed') need(v, 'reason');
      const device = ctx.device();
      const items = await device.smsQueue.lease();
      const reported = [];
      for (const item of items) {
        ctx.print(`#${item.id} to ${item.phone}: ${item.message}`);
        if (report === 'none') continue;
        // "Sending" happens here on a real phone; `delivered` implies it was sent first.
        if (report === 'delivered') await device.smsQueue.report(item.id, { status: 'sent' }, { idempotencyKey: `sim-report-${item.id}-sent` });
        const body = report === 'failed' ? { status: 'failed' as const, reason: v.reason as string } : { status: report as 'sent' | 'delivered' };
        // Repeating a report answers the current state, so a retry is safe.
        const state = await device.smsQueue.report(item.id, body, { idempotencyKey: `sim-report-${item.id}-${report}` });
        ctx.print(`  -> ${state.status}`);
        reported.push(state);
      }
      if (items.length === 0) ctx.print('queue is empty');
      return { items, reported };
    },
  },
  sms: {
    summary: 'Forward SMS (screened by the filter rules first, as the app does)',
    usage: 'sms --from <sender> --body <text> [--received-at <ISO time>] [--id <message id>] [--sim <slot>] [--to <receiving SIM number>] | sms --file <messages.json> [--no-filter] [--miss]',
    options: {
      miss: { type: 'boolean' },
      from: { type: 'string' },
      body: { type: 'string' },
      'received-at': { type: 'string' },
      id: { type: 'string' },
      sim: { type: 'string' },
      to: { type: 'string' },
      file: { type: 'string' },
      'no-filter': { type: 'boolean' },
    },
    async run(ctx, v) {
      const inputs: SmsInput[] = v.file
        ? readSmsFile(v.file as string)
        : [{ sender: need(v, 'from'), body: need(v, 'body'), received_at: v['received-at'] as string | undefined, device_message_id: v.id as string | undefined, sim_slot: intOption(v, 'sim', 0, 7), receiving_number: v.to as string | undefined }];
      const device = ctx.device();
      const rules = v['no-filter'] ? null : await device.filterRules.retrieve();
      const results: Array<Record<string, unknown>> = [];
      const received: InboxSms[] = [];
      for (const sms of inputs) {
        const screen = rules ? screenSms(rules, sms) : { forward: true as const };
        if (!screen.forward) {
          ctx.print(`skipped (${screen.reason}): ${sms.sender}`);
          results.push({ sender: sms.sender, forwarded: false, reason: screen.reason });
          // With sequences on, numbered all the same when its sender is allowed: the service must know the phone saw it.
          if (!ctx.state?.sequences || screen.reason === 'sender_not_allowed') continue;
        }
        received.push({
          device_message_id: sms.device_message_id ?? `sim-${randomUUID()}`,
          sender: sms.sender,
          body: sms.body,
          received_at: sms.received_at ?? new Date().toISOString(),
          ...(sms.sim_slot === undefined ? {} : { sim_slot: sms.sim_slot }),
          ...(sms.receiving_number === undefined ? {} : { receiving_number: sms.receiving_number }),
          ...(screen.forward ? {} : { screened: true }),
        });
      }
      numberSms(ctx.statePath, received);
      const toSend = received.filter((m) => !m.screened);
      // The phone keeps every SMS it received; `--miss` receives without forwarding (the app was killed, the phone offline).
      addToInbox(ctx.statePath, received);
      if (v.miss) {
        for (const m of toSend) ctx.print(`${m.device_message_id}: received, not forwarded (missed)`);
        return { rules_version: rules?.version ?? null, results: toSend.map((m) => ({ device_message_id: m.device_message_id, forwarded: false, reason: 'missed' })) };
      }
      const screenedNumbered = received.filter((m) => m.screened && m.sequence !== undefined);
      if (screenedNumbered.length > 0) {
        // Screened numbers first, so no later number of their counter makes them look missing; never their text.
        for (const g of byEpoch(screenedNumbered)) {
          await device.smsMessages.forward({ messages: [], sequence_epoch: g.epoch, screened_sequences: screenedRanges(g.messages.map((m) => ({ simSlot: m.sim_slot, sequence: m.sequence! }))) });
        }
      }
      const batches = byEpoch(toSend).flatMap((g) => Array.from({ length: Math.ceil(g.messages.length / SMS_BATCH) }, (_, k) => ({ epoch: g.epoch, messages: g.messages.slice(k * SMS_BATCH, (k + 1) * SMS_BATCH) })));
      for (const { epoch, messages } of batches) {
        const batch = messages.map(wire);
        // The service stores each message once by its device_message_id, so repeating a batch is safe.
        const answers = await device.smsMessages.forward(
          { messages: batch, device_time: new Date().toISOString(), ...(epoch === undefined ? {} : { sequence_epoch: epoch }) },
          { idempotencyKey: `sim-sms-${batch[0]!.device_message_id}` },
        );
        for (const a of answers) {
          ctx.print(
            a.id === null
              ? `${a.device_message_id}: ${a.match_status} (${a.screen_reason ?? 'refused'}), nothing stored`
              : `${a.device_message_id}: record ${a.id} ${a.match_status}${a.trx_id ? ` -> ${a.trx_id}` : ''}`,
          );
          results.push({ forwarded: true, ...a });
        }
      }
      return { rules_version: rules?.version ?? null, results };
    },
  },
  backfill: {
    summary: "Answer the service's backfill requests: re-send the inbox SMS of each requested window (and senders)",
    usage: 'backfill',
    options: {},
    async run(ctx) {
      const device = ctx.device();
      const answered = await answerFromInbox(device, loadState(ctx.statePath)?.inbox ?? [], ctx.print);
      if (answered.length === 0) ctx.print('no backfill requests');
      return { answered: answered.map(windowJson) };
    },
  },
  watch: {
    summary: 'Run as the app does in the background: on every push notification, read it and answer the open commands',
    usage: 'watch [--interval <ms>] [--for <seconds>]',
    options: { interval: { type: 'string' }, for: { type: 'string' } },
    async run(ctx, v) {
      const device = ctx.device();
      const interval = intOption(v, 'interval', 50, 600_000) ?? 2000;
      const seconds = intOption(v, 'for', 1, 86_400);
      const until = seconds === undefined ? Infinity : Date.now() + seconds * 1000;
      const answered: BackfillWindow[] = [];
      let stop = false;
      const onSignal = () => (stop = true);
      process.once('SIGINT', onSignal);
      try {
        // Answer what is open already (the app does on start), then on every notification.
        answered.push(...(await answerFromInbox(device, loadState(ctx.statePath)?.inbox ?? [], ctx.print)));
        while (!stop && Date.now() < until) {
          await new Promise((r) => setTimeout(r, Math.min(interval, Math.max(0, until - Date.now()))));
          if (stop || Date.now() >= until) break;
          answered.push(...(await pollOnce(device, () => loadState(ctx.statePath)?.inbox ?? [], ctx.print)));
        }
      } finally {
        process.off('SIGINT', onSignal);
      }
      return { answered: answered.map(windowJson) };
    },
  },
  dashboard: {
    summary: "Today's revenue, counts, recent transactions and unread notifications",
    usage: 'dashboard',
    options: {},
    async run(ctx) {
      const d = await ctx.device().dashboard.retrieve();
      ctx.print(JSON.stringify(d, null, 2));
      return d;
    },
  },
  rules: {
    summary: 'Show the SMS filter rules',
    usage: 'rules',
    options: {},
    async run(ctx) {
      const r = await ctx.device().filterRules.retrieve();
      ctx.print(`version ${r.version} (re-check every ${r.check_interval_hours} h)\n  senders: ${r.allowed_senders.join(', ') || '(any)'}\n  must contain one of: ${r.positive_keywords.join(', ') || '(anything)'}\n  never forward: ${r.negative_keywords.join(', ')}`);
      return r;
    },
  },
  notifications: {
    summary: 'List unread notifications (--ack marks them read)',
    usage: 'notifications [--ack]',
    options: { ack: { type: 'boolean' } },
    async run(ctx, v) {
      const device = ctx.device();
      const list = await device.notifications.listUnread();
      for (const n of list) ctx.print(`#${n.id} ${n.created_at} ${n.title}: ${n.body}`);
      if (list.length === 0) ctx.print('no unread notifications');
      const acknowledged = v.ack && list.length ? (await device.notifications.acknowledge({ ids: list.map((n) => n.id) })).acknowledged : 0;
      if (v.ack) ctx.print(`acknowledged ${acknowledged}`);
      return { notifications: list, acknowledged };
    },
  },
};

function mainHelp(): string {
  const width = Math.max(...Object.keys(commands).map((k) => k.length));
  return [
    'Usage: npm run device-sim -- <command> [options]',
    '',
    'Simulates the companion app on a paired phone, through the device SDK.',
    '',
    'Commands:',
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Options for every command:',
    globalHelp,
    '',
    'Run `npm run device-sim -- <command> --help` for a command’s options.',
  ].join('\n');
}

function commandHelp(name: string, c: Command): string {
  return [`Usage: npm run device-sim -- ${c.usage}`, '', c.summary + '.', '', 'Options for every command:', globalHelp].join('\n');
}

/** Runs the simulator; returns the exit code (0 ok, 1 API error, 2 pairing required, 64 usage). */
export async function run(argv: string[], io: Io = { out: (l) => console.log(l), err: (l) => console.error(l) }): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(mainHelp());
    return name ? 0 : 64;
  }
  const command = commands[name];
  if (!command) {
    io.err(`Unknown command "${name}".\n\n${mainHelp()}`);
    return 64;
  }
  let values: Values;
  try {
    values = parseArgs({ args: rest, options: { ...globalOptions, ...command.options }, strict: true, allowPositionals: false }).values as Values;
  } catch (err) {
    io.err(`${(err as Error).message}\n\n${commandHelp(name, command)}`);
    return 64;
  }
  if (values.help) {
    io.out(commandHelp(name, command));
    return 0;
  }
  const json = values.json === true;
  try {
    const statePath = path.resolve((values.state as string | undefined) ?? DEFAULT_STATE);
    const state = loadState(statePath);
    const baseUrl = (values['base-url'] as string | undefined) ?? state?.baseUrl ?? DEFAULT_BASE_URL;
    const ctx: Ctx = {
      io,
      json,
      statePath,
      state,
      baseUrl,
      print: (line) => {
        if (!json) io.out(line);
      },
      device() {
        if (!state?.tokens) throw new PairingRequiredError({ code: 'PAIRING_REQUIRED', message: `Not paired (no tokens in ${statePath})` });
        return new PaycollectDevice({
          baseUrl,
          fingerprint: state.fingerprint,
          tokens: state.tokens,
          onTokens: (tokens) => saveState(statePath, { ...state, baseUrl, tokens }),
        });
      },
    };
    const result = await command.run(ctx, values);
    if (json) io.out(JSON.stringify(result, null, 2));
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`${err.message}\n\n${commandHelp(name, command)}`);
      return 64;
    }
    if (!(err instanceof PaycollectError)) throw err;
    const info = { code: err.code, message: err.message, status: err.status, request_id: err.requestId, errors: err.errors };
    if (json) io.out(JSON.stringify({ error: info }, null, 2));
    else {
      io.err(`error ${err.code}${err.status ? ` (HTTP ${err.status})` : ''}: ${err.message}${err.requestId ? ` [request ${err.requestId}]` : ''}`);
      for (const e of err.errors.filter((x) => x.field)) io.err(`  ${e.field}: ${e.message}`);
      if (err instanceof PairingRequiredError) io.err('Pair again: npm run device-sim -- pair --code <code from the merchant panel>');
    }
    return err instanceof PairingRequiredError ? 2 : 1;
  }
}

if (import.meta.main) {
  process.exitCode = await run(process.argv.slice(2));
}
