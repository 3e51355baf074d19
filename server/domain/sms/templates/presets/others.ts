import { AMOUNT, BALANCE, CUR, DMY_TIME, FEE, GAP, SENDER_NUMBER, trx } from './blocks.ts';
import type { GatewayPreset } from './types.ts';

// Wordings and senders: see docs/sms-presets.md and test/fixtures/sms/*.json for
// the public sources of each one. These wallets publish one or two "money in"
// wordings each in the open-source panels; of their money-out messages only Tap's
// Cash Out and CellFin's Send Money were found.

const ID = trx('[a-z0-9]', 6, 20);

export const upay: GatewayPreset = {
  code: 'upay',
  name: 'Upay',
  senders: ['upay'],
  templates: [
    {
      // Tk. 500.00 has been received from 01712345678. Ref-abc. Balance Tk. 1,500.00. TrxID 01HXYZ at 12/03/2024 14:30.
      pattern: String.raw`^\s*Tk\.\s*${AMOUNT}\s+has\s+been\s+received\s+from\s+${SENDER_NUMBER}\.${GAP}\bBalance\s+Tk\.\s*${BALANCE}\.\s*TrxID\s*:?\s*${ID}\s+at\s+${DMY_TIME}`,
      flags: 'i', direction: 'in', kind: 'received', verified: true,
    },
    {
      // Cash In Received.\nAmount: Tk ...\nUddokta: ...\nTxnID: ...\nBalance: ...
      pattern: String.raw`^\s*Cash\s+In\s+Received\.?\s*Amount\s*:\s*${CUR}\s*${AMOUNT}\s*Uddokta\s*:\s*${SENDER_NUMBER}\s*TxnID\s*:\s*${ID}\s*Balance\s*:\s*(?:${CUR}\s*)?${BALANCE}`,
      flags: 'i', direction: 'in', kind: 'cash_in', verified: true,
    },
    {
      // A merchant (Bangla QR) payment received: Received Payment of Tk.1.00 from 01700000020. ... TrxID 01M3V635E0
      pattern: String.raw`^\s*Received\s+Payment\s+of\s+Tk\.?\s*${AMOUNT}\s+from\s+${SENDER_NUMBER}\b${GAP}\bTrxID\s*:?\s*${ID}`,
      flags: 'i', direction: 'in', kind: 'merchant_payment_received', verified: true,
    },
  ],
  outSamples: [],
};

export const tap: GatewayPreset = {
  code: 'tap',
  name: 'Tap',
  senders: ['tap.'],
  templates: [
    {
      // Received Tk 500.00 from 01712345678. Balance Tk. 1,500.00. TxID: ABC123XYZ.
      pattern: String.raw`^\s*Received\s+${CUR}\s*${AMOUNT}\s+from\s+${SENDER_NUMBER}\.\s*Balance\s+${CUR}\s*${BALANCE}\.\s*TxID\s*:\s*${ID}`,
      flags: 'i', direction: 'in', kind: 'received', verified: true,
    },
    {
      // Cash Out Tk 5000.00 to 8801700000005. Fee Tk Paid TK. 73.50. Balance Tk 26.50. TxID: ... (the fee words are Tap's own)
      pattern: String.raw`^\s*Cash\s+Out\s+${CUR}\s*${AMOUNT}\s+to\s+${SENDER_NUMBER}\.\s*Fee\b[^\n]{0,20}?${CUR}\s*${FEE}\.\s*Balance\s+${CUR}\s*${BALANCE}\.\s*TxID\s*:\s*${ID}`,
      flags: 'i', direction: 'out', kind: 'cash_out', verified: true,
    },
  ],
  outSamples: ['Cash Out Tk 5000.00 to 8801700000005. Fee Tk Paid TK. 73.50. Balance Tk 26.50. TxID: AAAAAAAAAAAAAA'],
};

export const okwallet: GatewayPreset = {
  code: 'okwallet',
  name: 'OK Wallet',
  senders: ['16269', '01847-348685'],
  templates: [
    {
      // (OK Wallet) Successfully received Tk 500.00 from A/C 01712345678. Ref abc. Balance Tk 1,500.00. TrxID ABC123XYZ
      pattern: String.raw`^\s*\(OK\s+Wallet\)\s+Successfully\s+received\s+${CUR}\s*${AMOUNT}\s+from\s+A/C\s+${SENDER_NUMBER}\.${GAP}\bBalance\s+${CUR}\s*${BALANCE}\.\s*TrxID\s*:?\s*${ID}`,
      flags: 'i', direction: 'in', kind: 'received', verified: true,
    },
  ],
  outSamples: [],
};

export const mcash: GatewayPreset = {
  code: 'mcash',
  name: 'IBBL mCash',
  senders: ['16259'],
  templates: [
    {
      // IBBL mCash You have received Tk: 500.00 From: 01712345678 Reference: abc Balance Tk: 1,500.00 TrxID: ABC123XYZ
      pattern: String.raw`^\s*IBBL\s+mCash\s+You\s+have\s+received\s+Tk\s*:\s*${AMOUNT}\s+From\s*:\s*${SENDER_NUMBER}${GAP}\bBalance\s+Tk\s*:\s*${BALANCE}\s+TrxID\s*:\s*${ID}`,
      flags: 'i', direction: 'in', kind: 'received', verified: true,
    },
  ],
  outSamples: [],
};

export const cellfin: GatewayPreset = {
  code: 'cellfin',
  name: 'IBBL CellFin',
  senders: ['IBBL .'],
  templates: [
    {
      // Islami Bank CellFin Received 500.00 Tk From CellFin: 01712345678 To CellFin: 01812345678 TrxId: ABC123XYZ
      pattern: String.raw`^\s*Islami\s+Bank\s+CellFin\s+Received\s+${AMOUNT}\s+Tk\s+From\s+CellFin\s*:\s*${SENDER_NUMBER}\s+To\s+CellFin\s*:\s*\d{3,20}\s+TrxId\s*:\s*${ID}`,
      flags: 'i', direction: 'in', kind: 'received', verified: true,
    },
    {
      // CellFin\nSend Money Complete\nFrom: <account>\nTo: <account>\nAmount: 1500.00\nTrx Fee: 5.75\nTrxId: 9626052600029140
      pattern: String.raw`^\s*(?:Islami\s+Bank\s+)?CellFin\s+Send\s+Money\s+Complete\b[\s\S]{0,200}?\bAmount\s*:\s*(?:${CUR}\s*)?${AMOUNT}(?:\s*Trx\s+Fee\s*:\s*(?:${CUR}\s*)?${FEE})?(?:\s*TrxId\s*:\s*${ID})?`,
      flags: 'i', direction: 'out', kind: 'send_money', verified: true,
    },
    {
      // To a bKash wallet: Islami Bank CellFin\nSend Money bKash Successful.\nFrom: <account>\nbKash Wallet: 01700000023\nAmount: 5100.00
      pattern: String.raw`^\s*(?:Islami\s+Bank\s+)?CellFin\s+Send\s+Money\s+bKash\s+Successful\.?[\s\S]{0,200}?\bAmount\s*:\s*(?:${CUR}\s*)?${AMOUNT}`,
      flags: 'i', direction: 'out', kind: 'send_money_bkash', verified: true,
    },
  ],
  outSamples: [
    'CellFin\nSend Money Complete\nFrom: 20500000000000001\nTo: 20500000000000002\nAmount: 1500.00\nTrx Fee: 5.75\nTrxId: 9626052600029140',
    'Islami Bank CellFin\nSend Money bKash Successful.\nFrom: 20500000000000001\nbKash Wallet: 01700000023\nAmount: 5100.00',
  ],
};

export const pathaopay: GatewayPreset = {
  code: 'pathaopay',
  name: 'Pathao Pay',
  senders: ['PathaoPay'],
  templates: [
    {
      // You have received BDT 500.00 from +8801712345678. Balance BDT 1,500.00 TrxID ABC123XYZ
      pattern: String.raw`^\s*You\s+have\s+received\s+BDT\s*${AMOUNT}\s+from\s+${SENDER_NUMBER}\.\s*Balance\s+BDT\s*${BALANCE}\s+TrxID\s*:?\s*${ID}`,
      flags: 'i', direction: 'in', kind: 'received', verified: true,
    },
  ],
  outSamples: [],
};
