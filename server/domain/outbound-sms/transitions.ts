import type { OutboundSmsStatus } from './entities.ts';

export type OutboundSmsReport = 'sent' | 'failed' | 'delivered';

/**
 * Which stored statuses a device report may move from. `pending` and `expired`
 * are here because a report can arrive after the lease ran out: the phone did
 * send (or fail), and recording that beats sending the SMS a second time. Only
 * the device that last held the lease can report at all.
 */
export const REPORT_FROM: Readonly<Record<OutboundSmsReport, readonly OutboundSmsStatus[]>> = {
  sent: ['leased', 'pending', 'expired'],
  failed: ['leased', 'pending', 'expired'],
  delivered: ['leased', 'pending', 'expired', 'sent'],
};

/** Statuses in which a report is a repeat of one already applied: answered, nothing changes. */
const REPORT_ALREADY: Readonly<Record<OutboundSmsReport, readonly OutboundSmsStatus[]>> = {
  sent: ['sent', 'delivered'],
  failed: ['failed'],
  delivered: ['delivered'],
};

export type ReportDecision = 'apply' | 'repeat' | 'conflict';

export function decideReport(current: OutboundSmsStatus, report: OutboundSmsReport): ReportDecision {
  if (REPORT_ALREADY[report].includes(current)) return 'repeat';
  if (REPORT_FROM[report].includes(current)) return 'apply';
  return 'conflict';
}
