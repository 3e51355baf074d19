import type { PhoneHealthState } from '../../../contract/vocabulary.ts';

/**
 * A phone's health for forwarding SMS (README, "Phone diagnostics"), from what
 * its heartbeats last reported. Pure: the admin API, the console and the alert
 * all read it from here.
 *
 * - `cannot_receive`: the app lacks the SMS permission: nothing reaches it.
 * - `at_risk`: Android's battery optimisation is on for the app: Doze and app
 *   standby may stop it from forwarding in the background.
 * - `ok`: the app reported both, and neither is a problem.
 * - `unknown`: the app reports neither (an older app, or the OwnPay app).
 */
export interface PhoneReport {
  smsPermission: boolean | null;
  batteryOptimizationIgnored: boolean | null;
}

export interface PhoneHealth {
  state: PhoneHealthState;
  /** What is wrong, in words for an operator. */
  problems: string[];
}

export function phoneHealth(r: PhoneReport): PhoneHealth {
  const problems: string[] = [];
  if (r.smsPermission === false) problems.push('The app has no SMS permission: it cannot receive or forward any SMS. Grant it in Android settings.');
  if (r.batteryOptimizationIgnored === false) {
    problems.push('Battery optimisation is on for the app: Android may stop it from forwarding in the background. Set the app to "Unrestricted".');
  }
  if (r.smsPermission === false) return { state: 'cannot_receive', problems };
  if (problems.length > 0) return { state: 'at_risk', problems };
  if (r.smsPermission === null && r.batteryOptimizationIgnored === null) return { state: 'unknown', problems };
  return { state: 'ok', problems };
}
