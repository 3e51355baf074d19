/**
 * "The SMS time" of a record (sms/matching/queries/records.ts, PendingSmsRecord.smsTime) as SQL:
 * the phone's receipt time corrected by the phone's clock offset, never later
 * than the server's receipt. `record` names the sms_records row, `clockOffset`
 * the expression of its device's devices.clock_offset_ms. One definition for
 * the matcher's reads and for the intake's INSERT, which returns it.
 */
export function smsTimeSql(record: string, clockOffset: string): string {
  return `LEAST(${record}.received_at - make_interval(secs => COALESCE(${clockOffset}, 0) / 1000.0), ${record}.server_received_at)`;
}
