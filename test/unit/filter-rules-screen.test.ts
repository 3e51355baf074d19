import { describe, expect, it } from 'vitest';
import { DEFAULT_FILTER_RULES } from '../../server/domain/filter-rules/defaults.ts';
import { containsKeyword, screenSms } from '../../server/domain/filter-rules/screen.ts';

// What a brand with the bKash, Nagad and Rocket gateways enabled gets.
const DEFAULTS = { ...DEFAULT_FILTER_RULES, allowedSenders: ['bKash', 'NAGAD', '16216'] };

describe('default rules', () => {
  it.each([
    ['bKash', 'You have received Tk 1,250.00 from 01712345678. Ref 42. Fee Tk 0.00. Balance Tk 5,432.10. TrxID BFC2XYZ789 at 15/03/2024 14:32'],
    ['NAGAD', 'Money Received.\nAmount: Tk 1,250.00\nSender: 01712345678\nRef: N/A\nTxnID: 71A2B3C4\nBalance: Tk 5,000.00'],
    ['16216', 'Tk1,250.00 received from A/C:017123456789 Fee:Tk0, Your A/C Balance: Tk5,432.10 TxnId:3579246810'],
    ['bkash', 'আপনি ৳৫০০ টাকা পেয়েছেন 01712345678 থেকে। TrxID BFC2XYZ789'],
  ])('forward the money-received SMS of %s', (sender, body) => {
    expect(screenSms(DEFAULTS, { sender, body })).toEqual({ forward: true });
  });

  it.each([
    ['bKash', 'Your bKash OTP is 123456. Do not share it with anyone.'],
    ['bKash', 'Your verification code is 4821. Received a request to log in.'],
    ['bKash', 'Never share your PIN. You have received Tk 500.00 from 01712345678.'],
    ['NAGAD', 'Your one-time password: 998877'],
    ['NAGAD', 'Your one time passcode is 1234'],
    ['16216', 'Your Rocket security code is 5678'],
    ['bKash', 'আপনার ওটিপি ১২৩৪৫৬। কাউকে দেবেন না।'],
    ['bKash', 'আপনার পিন নম্বর পরিবর্তন হয়েছে'],
    ['NAGAD', 'আপনার ভেরিফিকেশন কোড ৪৫৬৭'],
  ])('never forward one-time codes, PINs, passwords, verification codes: %s %j', (sender, body) => {
    expect(screenSms(DEFAULTS, { sender, body })).toEqual({ forward: false, reason: 'negative_keyword' });
  });

  it('only from allowed senders, compared as ASCII ignoring case and nothing else', () => {
    const body = 'You have received Tk 10.00 from 01712345678. TrxID ABCDEFGH';
    expect(screenSms(DEFAULTS, { sender: 'BKASH', body }).forward).toBe(true);
    expect(screenSms(DEFAULTS, { sender: 'ｂＫａｓｈ', body })).toEqual({ forward: false, reason: 'sender_not_allowed' });
    expect(screenSms(DEFAULTS, { sender: 'B KASH', body })).toEqual({ forward: false, reason: 'sender_not_allowed' });
    expect(screenSms(DEFAULTS, { sender: '+8801712345678', body })).toEqual({ forward: false, reason: 'sender_not_allowed' });
    expect(screenSms(DEFAULTS, { sender: 'bKash-Offer', body })).toEqual({ forward: false, reason: 'sender_not_allowed' });
  });
});

describe('keyword matching', () => {
  it.each([
    ['PIN', 'Enter your PIN', true],
    ['PIN', 'enter your pin.', true],
    ['PIN', 'Happy shopping!', false],
    ['PIN', 'PINCODE 1234', false],
    ['OTP', 'OTP:123456', true],
    ['verification code', 'Your verification\n code is 1', true],
    ['verification code', 'verificationcode', false],
    ['পিন', 'আপনার পিন নম্বর', true],
    ['পিন', 'পিনকোড', false],
    ['Tk', 'Tk1,250.00 received', false],
    ['Tk', 'Tk 1,250.00 received', true],
  ])('%j in %j: %s', (keyword, text, expected) => {
    expect(containsKeyword(text, [keyword])).toBe(expected);
  });

  it('an empty sender list allows no sender; empty keyword lists add no condition; a positive list requires one of its words', () => {
    expect(screenSms({ allowedSenders: [], positiveKeywords: [], negativeKeywords: [] }, { sender: 'bKash', body: 'anything' })).toEqual({ forward: false, reason: 'sender_not_allowed' });
    const open = { allowedSenders: ['x'], positiveKeywords: [], negativeKeywords: [] };
    expect(screenSms(open, { sender: 'x', body: 'anything' })).toEqual({ forward: true });
    expect(screenSms({ ...open, positiveKeywords: ['received'] }, { sender: 'x', body: 'balance low' })).toEqual({ forward: false, reason: 'no_positive_keyword' });
  });

  it('negative wins over positive', () => {
    expect(screenSms({ allowedSenders: ['x'], positiveKeywords: ['received'], negativeKeywords: ['OTP'] }, { sender: 'x', body: 'received OTP' })).toEqual({
      forward: false,
      reason: 'negative_keyword',
    });
  });
});
