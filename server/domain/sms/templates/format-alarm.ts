import type { Mode } from '../../../../contract/vocabulary.ts';
import { raiseAlert } from '../../alerts/raise.ts';
import type { PiiCipher } from '../../../infra/crypto/pii-cipher.ts';
import { getSettings } from '../../settings/service.ts';
import { decryptSmsSender, smsRowBinding, textKept } from '../intake/record-cipher.ts';
import { recordEvent } from '../../webhooks/outbox.ts';
import { loadGatewaySmsConfigs } from '../matching/candidates.ts';
import { sameSender } from './senders.ts';
import { alarmRows, clearOpenAlarm, decidedRecordsSince, openAlarm } from './queries.ts';
import { transaction, type Db } from '../../db.ts';

/**
 * Format-change alarm. A wallet that changes its wording makes its official
 * messages stop parsing without any error: they become `no_match`. Per brand,
 * mode and official sender, the share of `no_match` records in the recent
 * window is compared with the day before it; when it rises by at least
 * `sms_alarm_rise` over at least `sms_alarm_min_messages` messages, one alarm
 * row is raised (the admin API lists it; operator alert delivery reads it) and
 * the brand gets one `gateway.sms_unparsed` event, in the same transaction. The
 * episode stays open (no new alarm, no new event) until a run sees the sender's
 * recent messages parse again (unparsed share below the rise), which clears it.
 */

/** Records scanned per run (the sender is encrypted, so it is read in memory); the newest first. */
const ALARM_SCAN_LIMIT = 20_000;
const BASELINE_MINUTES = 24 * 60;

interface Bucket {
  brandId: number;
  mode: Mode;
  gatewayId: number;
  gatewayCode: string;
  sender: string;
  recent: { total: number; unparsed: number };
  baseline: { total: number; unparsed: number };
}

const share = (s: { total: number; unparsed: number }) => (s.total === 0 ? 0 : s.unparsed / s.total);

export async function runFormatAlarm(em: Db, cipher: PiiCipher): Promise<{ raised: number; cleared: number }> {
  const settings = await getSettings(em);
  const windowMinutes = settings.sms_alarm_window_minutes;
  const gateways = await loadGatewaySmsConfigs(em);
  if (gateways.length === 0) return { raised: 0, cleared: 0 };
  const rows = await decidedRecordsSince(em, { windowMinutes, baselineMinutes: BASELINE_MINUTES, limit: ALARM_SCAN_LIMIT });

  const buckets = new Map<string, Bucket>();
  for (const row of rows) {
    const sender = decryptSmsSender(cipher, textKept(row.sender), smsRowBinding(row));
    // The first gateway (display order) naming the sender owns its alarm; the configured spelling is what is stored.
    const gateway = gateways.find((g) => g.senders.some((s) => sameSender(s, sender)));
    if (!gateway) continue;
    const official = gateway.senders.find((s) => sameSender(s, sender))!;
    const key = `${row.brand_id}/${row.mode}/${gateway.id}/${official}`;
    let b = buckets.get(key);
    if (!b) {
      b = { brandId: row.brand_id, mode: row.mode, gatewayId: gateway.id, gatewayCode: gateway.code, sender: official, recent: { total: 0, unparsed: 0 }, baseline: { total: 0, unparsed: 0 } };
      buckets.set(key, b);
    }
    const side = row.recent ? b.recent : b.baseline;
    side.total++;
    if (row.match_status === 'no_match') side.unparsed++;
  }

  let raised = 0;
  let cleared = 0;
  for (const b of buckets.values()) {
    const recentShare = share(b.recent);
    const baselineShare = share(b.baseline);
    const alarming = b.recent.total >= settings.sms_alarm_min_messages && recentShare - baselineShare >= settings.sms_alarm_rise;
    const recovered = b.recent.total > 0 && recentShare < settings.sms_alarm_rise;
    if (alarming) {
      if (await raise(em, b, windowMinutes, recentShare, baselineShare)) raised++;
    } else if (recovered) {
      cleared += await clearOpenAlarm(em, b);
    }
  }
  return { raised, cleared };
}

/** Raises the episode and its event once: the open-episode unique index turns a second raise into nothing. */
async function raise(em: Db, b: Bucket, windowMinutes: number, recentShare: number, baselineShare: number): Promise<boolean> {
  return transaction(em, async (tx) => {
    const row = await openAlarm(tx, b, {
      windowMinutes,
      unparsed: b.recent.unparsed,
      total: b.recent.total,
      share: recentShare.toFixed(4),
      baselineShare: baselineShare.toFixed(4),
    });
    if (!row) return false;
    await recordEvent(tx, {
      brandId: b.brandId,
      mode: b.mode,
      event: 'gateway.sms_unparsed',
      data: {
        alarm_id: row.id,
        gateway: b.gatewayCode,
        sender: b.sender,
        window_minutes: windowMinutes,
        unparsed: b.recent.unparsed,
        total: b.recent.total,
        share: recentShare.toFixed(4),
        baseline_share: baselineShare.toFixed(4),
        raised_at: row.raised_at.toISOString(),
      },
    });
    // The operators hear of it too (e-mail), once per episode, unless the brand switched this alert off.
    await raiseAlert(tx, {
      brandId: b.brandId,
      type: 'sms_format_alarm',
      dedupeKey: `format-alarm:${row.id}`,
      subject: `SMS from ${b.gatewayCode} (${b.sender}) suddenly do not parse: ${b.recent.unparsed} of ${b.recent.total} in the last ${windowMinutes} minutes`,
      details: { alarm_id: row.id, gateway: b.gatewayCode, sender: b.sender, mode: b.mode, share: recentShare.toFixed(4), baseline_share: baselineShare.toFixed(4) },
    });
    return true;
  });
}

export interface FormatAlarmView {
  id: number;
  brand_id: number;
  mode: Mode;
  gateway: string;
  sender: string;
  window_minutes: number;
  unparsed: number;
  total: number;
  share: string;
  baseline_share: string;
  raised_at: string;
  cleared_at: string | null;
}

export async function listFormatAlarms(em: Db, filter: { brandId?: number; open?: boolean }): Promise<FormatAlarmView[]> {
  const rows = await alarmRows(em, filter);
  return rows.map(({ code, ...r }) => ({ ...r, gateway: code, raised_at: r.raised_at.toISOString(), cleared_at: r.cleared_at?.toISOString() ?? null }));
}
