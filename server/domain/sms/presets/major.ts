import { AMOUNT, BALANCE, CUR, DMY_TIME, FEE, GAP, SENDER_NUMBER, trx } from './blocks.ts';
import type { GatewayPreset } from './types.ts';

// Wordings and senders: see docs/sms-presets.md and test/fixtures/sms/*.json for
// the public sources of each one.

const BKASH_TRX = trx('[a-z0-9]', 8, 12);
const bkashTail = String.raw`\bFee\s+${CUR}\s*${FEE}\.\s*Balance\s+${CUR}\s*${BALANCE}\.\s*TrxID\s*:?\s*${BKASH_TRX}\s+at\s+${DMY_TIME}`;

export const bkash: GatewayPreset = {
  code: 'bkash',
  name: 'bKash',
  senders: ['bKash'],
  templates: [
    {
      // You have received Tk 500.00 from 01712345678. Ref 42. Fee Tk 0.00. Balance Tk 1,117.78. TrxID CJU0PZQ3U6 at 30/10/2025 21:02
      pattern: String.raw`^\s*You\s+have\s+received\s+${CUR}\s*${AMOUNT}\s+from\s+${SENDER_NUMBER}\b${GAP}${bkashTail}`,
      flags: 'i', direction: 'in', kind: 'received', verified: true,
    },
    {
      // Older form without fee and balance: You have received Tk 500.00 from 01712345678.Ref 42. TrxID ... at ...
      pattern: String.raw`^\s*You\s+have\s+received\s+${CUR}\s*${AMOUNT}\s+from\s+${SENDER_NUMBER}\b${GAP}\bTrxID\s*:?\s*${BKASH_TRX}`,
      flags: 'i', direction: 'in', kind: 'received', verified: true,
    },
    {
      // You have received payment Tk 500.00 from 01783110247. Fee Tk 0.00. Balance Tk 9,452.20. TrxID DAM6CTT7RW at 22/01/2026 01:54
      pattern: String.raw`^\s*You\s+have\s+received\s+payment\s+${CUR}\s*${AMOUNT}\s+from\s+${SENDER_NUMBER}\b${GAP}${bkashTail}`,
      flags: 'i', direction: 'in', kind: 'merchant_payment_received', verified: true,
    },
    {
      // Cash In Tk 500.00 from 01900000000 successful. Fee Tk 0.00. Balance Tk 506.91. TrxID ... at 29/05/2026 19:00
      pattern: String.raw`^\s*Cash\s+In\s+${CUR}\s*${AMOUNT}\s+from\s+${SENDER_NUMBER}\s+successful\.\s*${bkashTail}`,
      flags: 'i', direction: 'in', kind: 'cash_in', verified: true,
    },
    {
      // Send Money Tk 0.20 to 01600000000 successful. Ref 2. Fee Tk 0.00. Balance Tk 0.08. TrxID ... at 07/06/2026 22:45.
      pattern: String.raw`^\s*Send\s+Money\s+${CUR}\s*${AMOUNT}\s+to\s+${SENDER_NUMBER}\s+successful\.${GAP}${bkashTail}`,
      flags: 'i', direction: 'out', kind: 'send_money', verified: true,
    },
    {
      // Payment of Tk 20.00 to Merchant XXXXX is successful. Balance Tk 20,268.41. TrxID ... at 26/05/2026 15:07.
      pattern: String.raw`^\s*Payment\s+of\s+${CUR}\s*${AMOUNT}\s+to\s+[\s\S]{1,120}?\s+is\s+successful\.\s*Balance\s+${CUR}\s*${BALANCE}\.\s*TrxID\s*:?\s*${BKASH_TRX}`,
      flags: 'i', direction: 'out', kind: 'payment', verified: true,
    },
    {
      // Bill successfully paid.\nBiller: PALLI BIDYUT\n...\nAmount: Tk 485.00\nFee: Tk 0.00\nTrxID: ... at ...
      pattern: String.raw`^\s*Bill\s+successfully\s+paid\.[\s\S]{0,300}?\bAmount\s*:\s*${CUR}\s*${AMOUNT}\s*Fee\s*:\s*${CUR}\s*${FEE}\s*TrxID\s*:?\s*${BKASH_TRX}`,
      flags: 'i', direction: 'out', kind: 'bill_pay', verified: true,
    },
    {
      // No public full wording found: any message opening with "Cash Out Tk <amount>" is a debit.
      pattern: String.raw`^\s*Cash\s+Out\s+${CUR}\s*${AMOUNT}\b`,
      flags: 'i', direction: 'out', kind: 'cash_out', verified: false,
    },
    {
      // No public full wording found: mobile recharge confirmations opening with "Mobile Recharge Tk <amount>".
      pattern: String.raw`^\s*Mobile\s+Recharge\s+${CUR}\s*${AMOUNT}\b`,
      flags: 'i', direction: 'out', kind: 'recharge', verified: false,
    },
  ],
  outSamples: [
    'Send Money Tk 0.20 to 01600000000 successful. Ref 2. Fee Tk 0.00. Balance Tk 0.08. TrxID DCK1B9P81H at 07/06/2026 22:45.',
    'Payment of Tk 20.00 to Merchant XXXXX is successful. Balance Tk 20,268.41. TrxID DEF5678UVW at 26/05/2026 15:07.',
    'Bill successfully paid.\nBiller: PALLI BIDYUT\nMM/YYYY: 052026\nSMS Account: 1234567890123\nAmount: Tk 485.00\nFee: Tk 0.00\nTrxID: DEF5678UVX at 28/05/2026 11:20',
  ],
};

const NAGAD_TRX = trx('[a-z0-9]', 6, 16);

export const nagad: GatewayPreset = {
  code: 'nagad',
  name: 'Nagad',
  senders: ['NAGAD', '01708403334'],
  templates: [
    {
      // Money Received.\nAmount: Tk 1,250.00\nSender: 01712345678\nRef: N/A\nTxnID: 71A2B3C4\nBalance: Tk 5,000.00\n15/03/2024 14:32
      pattern: String.raw`^\s*Money\s+Received\.?\s*(?:Amount|Amt)\s*:\s*${CUR}\s*${AMOUNT}\s*Sender\s*:\s*${SENDER_NUMBER}\b${GAP}\bTxnID\s*:\s*${NAGAD_TRX}\s*Balance\s*:\s*${CUR}\s*${BALANCE}(?:\s+${DMY_TIME})?`,
      flags: 'i', direction: 'in', kind: 'received', verified: true,
    },
    {
      // Cash In Received.\nAmount: Tk 2,000.00\nUddokta: 01812345678\nTxnID: 7A1B2C3D\nBalance: 15,000.00\n15/10/2025 15:00
      pattern: String.raw`^\s*Cash\s+In\s+Received\.?\s*Amount\s*:\s*${CUR}\s*${AMOUNT}\s*Uddokta\s*:\s*${SENDER_NUMBER}\s*TxnID\s*:\s*${NAGAD_TRX}\s*Balance\s*:\s*(?:${CUR}\s*)?${BALANCE}(?:\s+${DMY_TIME})?`,
      flags: 'i', direction: 'in', kind: 'cash_in', verified: true,
    },
    {
      // No public wording found: merchant "Payment Received." with "Customer:".
      pattern: String.raw`^\s*Payment\s+Received\.?\s*Amount\s*:\s*${CUR}\s*${AMOUNT}\s*Customer\s*:\s*${SENDER_NUMBER}\b${GAP}\bTxnID\s*:\s*${NAGAD_TRX}`,
      flags: 'i', direction: 'in', kind: 'merchant_payment_received', verified: false,
    },
    {
      // No public wording found: debits opening "Send Money." / "Cash Out." / "Payment." / "Bill Pay." then "Amount:".
      pattern: String.raw`^\s*(?:Send\s+Money|Cash\s+Out|Payment|Bill\s+Pay(?:ment)?|Mobile\s+Recharge)\s*(?:Successful)?\.?\s*Amount\s*:\s*${CUR}\s*${AMOUNT}`,
      flags: 'i', direction: 'out', kind: 'debit', verified: false,
    },
  ],
  outSamples: [],
};

export const rocket: GatewayPreset = {
  code: 'rocket',
  name: 'Rocket',
  senders: ['16216'],
  templates: [
    {
      // Tk99.00 received from A/C:***515 Fee:Tk0, Your A/C Balance: Tk1,145.85 TxnId:6606781284 Date:08-JUN-26 06:21:43 am.
      pattern: String.raw`^\s*${CUR}\s*${AMOUNT}\s+received\s+from\s+A/C\s*:?\s*${SENDER_NUMBER}\s*Fee\s*:\s*${CUR}\s*${FEE},?\s*Your\s+A/C\s+Balance\s*:\s*${CUR}\s*${BALANCE}\s*TxnId\s*:\s*${trx('\\d', 6, 16)}(?:\s*Date\s*:\s*(?<time>\d{2}-[a-z]{3}-\d{2}\s+\d{2}:\d{2}:\d{2}\s*[ap]m))?`,
      flags: 'i', direction: 'in', kind: 'received', verified: true,
    },
    {
      // Tk1,000.00 credited from card ***1234. Fee:Tk0 NetBal:Tk2,000.00 TxnId:1234567890 Date:...
      pattern: String.raw`^\s*${CUR}\s*${AMOUNT}\s+credited\s+from\s+card\s+${SENDER_NUMBER}\.?\s*Fee\s*:\s*${CUR}\s*${FEE}\s*NetBal\s*:\s*${CUR}\s*${BALANCE}\s*TxnId\s*:\s*${trx('\\d', 6, 16)}`,
      flags: 'i', direction: 'in', kind: 'card_credit', verified: true,
    },
  ],
  outSamples: [],
};
