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
      // From another wallet through the interbank switch, the payer's number masked by the wallet:
      // You have received Tk 100.00 from Nagad  0131XXX4677 through NPSB. Fee Tk 0.00.\nBalance Tk 175.32. TrxID ... at 14/08/2026 19:25.
      pattern: String.raw`^\s*You\s+have\s+received\s+${CUR}\s*${AMOUNT}\s+from\s+Nagad\s+${SENDER_NUMBER}\s+through\s+NPSB\.\s*${bkashTail}`,
      flags: 'i', direction: 'in', kind: 'received_npsb', verified: true,
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
      // A credit that is never a customer's payment (kind `cashback`): balance chain evidence only.
      // Congratulations! You have received Cashback Tk 50.00. Balance Tk 71.91. TrxID GHI9012RSU at 29/05/2026 19:15. Cashback on bkash transaction
      pattern: String.raw`^\s*(?:Congratulations!\s*)?You\s+have\s+received\s+Cashback\s+${CUR}\s*${AMOUNT}\.\s*Balance\s+${CUR}\s*${BALANCE}\.\s*TrxID\s*:?\s*${BKASH_TRX}\s+at\s+${DMY_TIME}`,
      flags: 'i', direction: 'in', kind: 'cashback', verified: true,
    },
    {
      // A campaign's cashback worded like a payment, "from" a campaign code and marked by its footer:
      // You have received Tk 5.00 from DM0000. Fee Tk 0.00. Balance Tk 4,593.00. TrxID AAA0000006 at 09/02/2023 20:42. Cashback on Special Offer Send Money
      pattern: String.raw`^\s*You\s+have\s+received\s+${CUR}\s*${AMOUNT}\s+from\s+[a-z0-9]{2,20}\.\s*${bkashTail}\.?\s*Cashback\b`,
      flags: 'i', direction: 'in', kind: 'cashback', verified: true,
    },
    {
      // Send Money Tk 0.20 to 01600000000 successful. Ref 2. Fee Tk 0.00. Balance Tk 0.08. TrxID ... at 07/06/2026 22:45.
      pattern: String.raw`^\s*Send\s+Money\s+${CUR}\s*${AMOUNT}\s+to\s+${SENDER_NUMBER}\s+successful\.${GAP}${bkashTail}`,
      flags: 'i', direction: 'out', kind: 'send_money', verified: true,
    },
    {
      // Payment of Tk 20.00 to Merchant XXXXX is successful. Balance Tk 20,268.41. TrxID ... at 26/05/2026 15:07.
      // Older messages say "Payment Tk 20.00 to ...-RM50927 is successful." (no "of").
      pattern: String.raw`^\s*Payment\s+(?:of\s+)?${CUR}\s*${AMOUNT}\s+to\s+[\s\S]{1,120}?\s+is\s+successful\.\s*Balance\s+${CUR}\s*${BALANCE}\.\s*TrxID\s*:?\s*${BKASH_TRX}`,
      flags: 'i', direction: 'out', kind: 'payment', verified: true,
    },
    {
      // Bill successfully paid.\nBiller: PALLI BIDYUT\n...\nAmount: Tk 485.00\nFee: Tk 0.00\nTrxID: ... at ...
      pattern: String.raw`^\s*Bill\s+successfully\s+paid\.[\s\S]{0,300}?\bAmount\s*:\s*${CUR}\s*${AMOUNT}\s*Fee\s*:\s*${CUR}\s*${FEE}\s*TrxID\s*:?\s*${BKASH_TRX}`,
      flags: 'i', direction: 'out', kind: 'bill_pay', verified: true,
    },
    {
      // Cash Out Tk 1,000.00 to 01700000001 successful. Fee Tk 18.50. Balance Tk 1,412.75. TrxID ... at 14/02/2023 18:31. Cash Out from Priyo Agent at 1.49%
      pattern: String.raw`^\s*Cash\s+Out\s+${CUR}\s*${AMOUNT}\s+to\s+${SENDER_NUMBER}\s+successful\.\s*${bkashTail}`,
      flags: 'i', direction: 'out', kind: 'cash_out', verified: true,
    },
    {
      // ATM Cash Out Tk 4,000.00 successful. Fee Tk 28.00. Balance Tk 4,508.43. TrxID ... at 08/02/2026 17:57
      pattern: String.raw`^\s*ATM\s+Cash\s+Out\s+${CUR}\s*${AMOUNT}\s+successful\.\s*${bkashTail}`,
      flags: 'i', direction: 'out', kind: 'cash_out', verified: true,
    },
    {
      // The recharge debit: Received Recharge request of Tk 20.00 for 01700000002. Fee Tk 0.00. Balance Tk 757.20. TrxID ... at 19/03/2023 08:36. Wait for confirmation.
      // "Received" opens it, yet it is money out: it must never be read as a credit.
      pattern: String.raw`^\s*Received\s+Recharge\s+request\s+of\s+${CUR}\s*${AMOUNT}\s+for\s+\+?\d{10,15}\.\s*${bkashTail}`,
      flags: 'i', direction: 'out', kind: 'recharge', verified: true,
    },
    {
      // A payment to a personal number, without "is": Payment Tk 5,075.00 to 01700000021 successful. Ref 1. Fee Tk 0.00. Balance Tk 5,061.15. TrxID ... at 04/11/2025 11:42
      pattern: String.raw`^\s*Payment\s+(?:of\s+)?${CUR}\s*${AMOUNT}\s+to\s+${SENDER_NUMBER}\s+successful\.${GAP}${bkashTail}`,
      flags: 'i', direction: 'out', kind: 'payment', verified: true,
    },
    {
      // Send Money request of Tk 6.00 to 01700000022 is accepted for processing. Fee Tk 0.00. Balance Tk 68.15. TrxID ... at 03/10/2025 19:48
      pattern: String.raw`^\s*Send\s+Money\s+request\s+of\s+${CUR}\s*${AMOUNT}\s+to\s+${SENDER_NUMBER}\s+is\s+accepted\s+for\s+processing\.\s*${bkashTail}`,
      flags: 'i', direction: 'out', kind: 'send_money', verified: true,
    },
    {
      // Your Digital Loan Repayment of Tk 5,068.61 is successful. Balance Tk 7.73. TrxID ... at 23/05/2026 12:10.
      pattern: String.raw`^\s*Your\s+Digital\s+Loan\s+Repayment\s+of\s+${CUR}\s*${AMOUNT}\s+is\s+successful\.\s*Balance\s+${CUR}\s*${BALANCE}\.\s*TrxID\s*:?\s*${BKASH_TRX}`,
      flags: 'i', direction: 'out', kind: 'loan_repayment', verified: true,
    },
    {
      // bKash to Bank of Tk 2,500.00 for VISA Debit Card is successful. Fee Tk 31.25. Balance Tk 72.73. TrxID ... at 29/03/2024 21:39
      pattern: String.raw`^\s*bKash\s+to\s+Bank\s+of\s+${CUR}\s*${AMOUNT}\s+for\s+[^\n]{1,80}?\s+is\s+successful\.\s*${bkashTail}`,
      flags: 'i', direction: 'out', kind: 'transfer_to_bank', verified: true,
    },
    {
      // Any other message opening with "Cash Out Tk <amount>" (a variant not seen yet) is still a debit.
      pattern: String.raw`^\s*Cash\s+Out\s+${CUR}\s*${AMOUNT}\b`,
      flags: 'i', direction: 'out', kind: 'cash_out', verified: false,
    },
    {
      // No genuine wording found (the real recharge debit is "Received Recharge request of Tk ..." above; the
      // confirmation "Your bKash Mobile Recharge request of Tk ... was successful" moves nothing): messages
      // opening with "Mobile Recharge Tk <amount>", as expense trackers assume, would still be a debit.
      pattern: String.raw`^\s*Mobile\s+Recharge\s+${CUR}\s*${AMOUNT}\b`,
      flags: 'i', direction: 'out', kind: 'recharge', verified: false,
    },
  ],
  outSamples: [
    'Send Money Tk 0.20 to 01600000000 successful. Ref 2. Fee Tk 0.00. Balance Tk 0.08. TrxID DCK1B9P81H at 07/06/2026 22:45.',
    'Payment of Tk 20.00 to Merchant XXXXX is successful. Balance Tk 20,268.41. TrxID DEF5678UVW at 26/05/2026 15:07.',
    'Cash Out Tk 1,000.00 to 01700000001 successful. Fee Tk 18.50. Balance Tk 1,412.75. TrxID ABE3KJY9H0 at 14/02/2023 18:31. Cash Out from Priyo Agent at 1.49%',
    'ATM Cash Out Tk 4,000.00 successful. Fee Tk 28.00. Balance Tk 4,508.43. TrxID AAA0000003 at 08/02/2026 17:57',
    'Received Recharge request of Tk 20.00 for 01700000002. Fee Tk 0.00. Balance Tk 757.20. TrxID ACJ9L8GW80 at 19/03/2023 08:36. Wait for confirmation.',
    'Payment Tk 5,075.00 to 01700000021 successful. Ref 1. Fee Tk 0.00. Balance Tk 5,061.15. TrxID CK47UA5CP0 at 04/11/2025 11:42',
    'Send Money request of Tk 6.00 to 01700000022 is accepted for processing. Fee Tk 0.00. Balance Tk 68.15. TrxID CJ39WHQFM0 at 03/10/2025 19:48',
    'Your Digital Loan Repayment of Tk 5,068.61 is successful. Balance Tk 7.73. TrxID DEN0I8U580 at 23/05/2026 12:10.',
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
      // Older form: Money Received.\nAmt: Tk 500.00\nSender: ...\nTxnID: ...\nBal: Tk 507.00\n04/06/2024 14:22, which
      // Nagad sometimes opens with a promotion line of its own ("WIN LAND IN DHAKA! CLICK NOW nagad.io/jmi").
      // That one header line is allowed; a forward marker ("Fwd:") as that line is not.
      pattern: String.raw`^\s*(?:(?!\s{0,3}(?:fwd?|forwarded)\b)[^\n]{1,80}\n)?\s*Money\s+Received\.?\s*(?:Amount|Amt)\s*:\s*${CUR}\s*${AMOUNT}\s*Sender\s*:\s*${SENDER_NUMBER}\b${GAP}\bTxnID\s*:\s*${NAGAD_TRX}\s*(?:Balance|Bal)\s*:\s*${CUR}\s*${BALANCE}(?:\s+${DMY_TIME})?`,
      flags: 'i', direction: 'in', kind: 'received', verified: true,
    },
    {
      // Cash In Received.\nAmount: Tk 2,000.00\nUddokta: 01812345678\nTxnID: 7A1B2C3D\nBalance: 15,000.00\n15/10/2025 15:00
      pattern: String.raw`^\s*Cash\s+In\s+Received\.?\s*Amount\s*:\s*${CUR}\s*${AMOUNT}\s*Uddokta\s*:\s*${SENDER_NUMBER}\s*TxnID\s*:\s*${NAGAD_TRX}\s*Balance\s*:\s*(?:${CUR}\s*)?${BALANCE}(?:\s+${DMY_TIME})?`,
      flags: 'i', direction: 'in', kind: 'cash_in', verified: true,
    },
    {
      // The merchant account's credit, the payer named as "Customer":
      // Payment Received.\nAmount: Tk 1.00\nCustomer: 01700000020\nTxnID: 75L7Z1Q0
      pattern: String.raw`^\s*Payment\s+Received\.?\s*Amount\s*:\s*${CUR}\s*${AMOUNT}\s*Customer\s*:\s*${SENDER_NUMBER}\b${GAP}\bTxnID\s*:\s*${NAGAD_TRX}`,
      flags: 'i', direction: 'in', kind: 'merchant_payment_received', verified: true,
    },
    {
      // A Bangla QR payment to the merchant account (no payer number):
      // Payment - Bangla QR Successfully Received.\nAmount: Tk 1.00\nTxn ID: 0001U730
      pattern: String.raw`^\s*Payment\s+-\s+Bangla\s+QR\s+Successfully\s+Received\.?\s*Amount\s*:\s*${CUR}\s*${AMOUNT}\s*Txn\s*ID\s*:\s*${NAGAD_TRX}`,
      flags: 'i', direction: 'in', kind: 'bangla_qr_received', verified: true,
    },
    {
      // Send Money Successful.\nAmount: Tk 3030.00\nReceiver: 01700000003\nRef: 1\nTxnID: 75QL4QL0\nFee: Tk 5.00\nBalance: Tk 460.62\n28/07/2026 15:10
      pattern: String.raw`^\s*Send\s+Money\s+Successful\.?\s*Amount\s*:\s*${CUR}\s*${AMOUNT}\s*Receiver\s*:\s*${SENDER_NUMBER}\b${GAP}\bTxnID\s*:\s*${NAGAD_TRX}\s*Fee\s*:\s*${CUR}\s*${FEE}\s*Balance\s*:\s*${CUR}\s*${BALANCE}(?:\s+${DMY_TIME})?`,
      flags: 'i', direction: 'out', kind: 'send_money', verified: true,
    },
    {
      // Payment to 'SOFTWARE SHOP LIMITED' is Successful.\nAmount: Tk  1050.00\nTxnID: 74JYF8J0\nBalance: Tk 10594.16\n06/11/2025 14:52
      pattern: String.raw`^\s*Payment\s+to\s+'[^'\n]{1,80}'\s+is\s+Successful\.?\s*Amount\s*:\s*${CUR}\s*${AMOUNT}\s*TxnID\s*:\s*${NAGAD_TRX}\s*Balance\s*:\s*${CUR}\s*${BALANCE}(?:\s+${DMY_TIME})?`,
      flags: 'i', direction: 'out', kind: 'payment', verified: true,
    },
    {
      // The recharge debit, though it says "Received": Mobile Recharge Request Received.\nAmount: Tk 130.00\nMobile:01800000004\nTxnID: 75Y2J600\nBalance: Tk 0.62\n06/09/2026 19:37
      pattern: String.raw`^\s*Mobile\s+Recharge\s+Request\s+Received\.?\s*Amount\s*:\s*${CUR}\s*${AMOUNT}\s*Mobile\s*:\s*\+?\d{10,15}\s*TxnID\s*:\s*${NAGAD_TRX}\s*Balance\s*:\s*${CUR}\s*${BALANCE}(?:\s+${DMY_TIME})?`,
      flags: 'i', direction: 'out', kind: 'recharge', verified: true,
    },
    {
      // No public wording found for Cash Out and bill pay: debits opening "Send Money." / "Cash Out." / "Payment." / "Bill Pay." then "Amount:".
      pattern: String.raw`^\s*(?:Send\s+Money|Cash\s+Out|Payment|Bill\s+Pay(?:ment)?|Mobile\s+Recharge)\s*(?:Successful)?\.?\s*Amount\s*:\s*${CUR}\s*${AMOUNT}`,
      flags: 'i', direction: 'out', kind: 'debit', verified: false,
    },
  ],
  outSamples: [
    'Send Money Successful.\nAmount: Tk 3030.00\nReceiver: 01700000003\nRef: 1\nTxnID: 75QL4QL0\nFee: Tk 5.00\nBalance: Tk 460.62\n28/07/2026 15:10',
    "Payment to 'SOFTWARE SHOP LIMITED' is Successful.\nAmount: Tk  1050.00\nTxnID: 74JYF8J0\nBalance: Tk 10594.16\n06/11/2025 14:52",
    'Mobile Recharge Request Received.\nAmount: Tk 130.00\nMobile:01800000004\nTxnID: 75Y2J600\nBalance: Tk 0.62\n06/09/2026 19:37',
  ],
};

/** Rocket's ids are digits only, and in some messages run straight into the next word ("TxnId:1111111111Date"). */
const ROCKET_TRX = String.raw`(?<trx_id>\d{6,16})(?!\d)`;

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
    {
      // Cash-In from A/C: ***106 Tk1,000.00 Fee: Tk.00, Your A/C Balance: Tk1,003.95.TxnId:6903714260 Date:02-SEP-26 11:17:23 am. Download ...
      // The id runs straight into "Date" in some messages, so it ends where the digits end.
      pattern: String.raw`^\s*Cash-In\s+from\s+A/C\s*:\s*${SENDER_NUMBER}\s*${CUR}\s*${AMOUNT}\s*Fee\s*:\s*${CUR}\s*${FEE},?\s*Your\s+A/C\s+Balance\s*:\s*${CUR}\s*${BALANCE}\.?\s*TxnId\s*:\s*${ROCKET_TRX}`,
      flags: 'i', direction: 'in', kind: 'cash_in', verified: true,
    },
    {
      // Tk1,000.00 trf to Mob:***978 Fee:Tk.00 NetBal:Tk3.95 TxnId:6903815976  Date:02-SEP-26 11:58:14 am. Pls tell recipient to open acc to rcv money.
      pattern: String.raw`^\s*${CUR}\s*${AMOUNT}\s+trf\s+to\s+Mob\s*:\s*${SENDER_NUMBER}\s*Fee\s*:\s*${CUR}\s*${FEE},?\s*NetBal\s*:\s*${CUR}\s*${BALANCE}\.?\s*TxnId\s*:\s*${ROCKET_TRX}`,
      flags: 'i', direction: 'out', kind: 'send_money', verified: true,
    },
    {
      // Tk1,000.00 paid to DPDC Id 1011 Bill No 32205988 TxnId:6818559471 Fee: Tk.00 Date:08-AUG-26 11:55:56 am.
      pattern: String.raw`^\s*${CUR}\s*${AMOUNT}\s+paid\s+to\s+[^\n]{1,120}?\s+TxnId\s*:\s*${ROCKET_TRX}(?:\s*Fee\s*:\s*${CUR}\s*(?:${FEE})?)?`,
      flags: 'i', direction: 'out', kind: 'bill_pay', verified: true,
    },
    {
      // Tk120.00 debited to recharge mobile 01700000011, Your A/C Balance:Tk3.95 TxnId: 6728015850 Date:11-JUL-26 01:11:18 pm. Pls download ...
      pattern: String.raw`^\s*${CUR}\s*${AMOUNT}\s+debited\s+to\s+recharge\s+mobile\s+\+?\d{10,15},?\s*Your\s+A/C\s+Balance\s*:\s*${CUR}\s*${BALANCE}\.?\s*TxnId\s*:\s*${ROCKET_TRX}`,
      flags: 'i', direction: 'out', kind: 'recharge', verified: true,
    },
  ],
  outSamples: [
    'Tk1,000.00 trf to Mob:***978 Fee:Tk.00 NetBal:Tk3.95 TxnId:6903815970  Date:02-SEP-26 11:58:14 am. Pls tell recipient to open acc to rcv money.',
    'Tk1,000.00 paid to DPDC Id 1011 Bill No 12345678 TxnId:6818559470 Fee: Tk.00 Date:08-AUG-26 11:55:56 am.',
    'Tk120.00 debited to recharge mobile 01700000011, Your A/C Balance:Tk3.95 TxnId: 6728015850 Date:11-JUL-26 01:11:18 pm. Pls download https://bit.ly/nexuspay',
  ],
};
