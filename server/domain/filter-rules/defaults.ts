import { defaultGatewayTemplates } from '../sms/template.ts';

export interface FilterRules {
  allowedSenders: string[];
  positiveKeywords: string[];
  negativeKeywords: string[];
  checkIntervalHours: number;
}

/**
 * Rules a brand starts with. The negative keywords are the privacy floor: an SMS
 * carrying a one-time code, PIN, password or verification code must never
 * leave the phone, whatever it also says. English and Bangla, because that is
 * what the wallets' and banks' messages are written in.
 */
export const DEFAULT_FILTER_RULES: Readonly<FilterRules> = Object.freeze({
  allowedSenders: Object.values(defaultGatewayTemplates).flatMap((g) => [...g.senders]),
  positiveKeywords: ['received', 'TrxID', 'TxnID', 'Cash In', 'payment', 'টাকা', 'পেয়েছেন', 'গ্রহণ'],
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
