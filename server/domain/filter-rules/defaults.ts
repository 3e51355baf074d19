export interface FilterRules {
  /** What phones get: the enabled gateways' official senders plus `extraSenders`. */
  allowedSenders: string[];
  /** Senders the admin allows on top of the gateways' (per brand). */
  extraSenders: string[];
  positiveKeywords: string[];
  negativeKeywords: string[];
  checkIntervalHours: number;
}

/** What an admin may change; the allowed senders follow from the gateways. */
export type FilterRulesPatch = Partial<Pick<FilterRules, 'extraSenders' | 'positiveKeywords' | 'negativeKeywords' | 'checkIntervalHours'>>;

/**
 * Rules a brand starts with. The negative keywords are the privacy floor: an SMS
 * carrying a one-time code, PIN, password or verification code must never
 * leave the phone, whatever it also says. English and Bangla, because that is
 * what the wallets' and banks' messages are written in. The allowed senders
 * are not here: they are the enabled gateways' official senders.
 */
export const DEFAULT_FILTER_RULES: Readonly<Omit<FilterRules, 'allowedSenders'>> = Object.freeze({
  extraSenders: [],
  positiveKeywords: ['received', 'TrxID', 'TxnID', 'TxID', 'Cash In', 'payment', 'টাকা', 'পেয়েছেন', 'গ্রহণ'],
  negativeKeywords: [
    'OTP',
    'one-time',
    'one time',
    'PIN',
    'password',
    'passcode',
    'verification code',
    'verification',
    'verify',
    'security code',
    'CVV',
    'do not share',
    "don't share",
    'ওটিপি',
    'পিন',
    'পাসওয়ার্ড',
    'গোপন',
    'ভেরিফিকেশন',
    'যাচাই',
    'কাউকে দেবেন না',
    'শেয়ার করবেন না',
  ],
  checkIntervalHours: 6,
});
