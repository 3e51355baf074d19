import { html, type SafeHtml } from './html.ts';
import { formatMoney, tHtml, type Lang } from './i18n.ts';

/**
 * Step-by-step instructions for paying into a Bangladeshi mobile wallet, in the
 * words its menus use: the app or the USSD menu (bKash *247#, Nagad *167#,
 * Rocket *322#, Upay *268#), "Send Money" to a personal number, "Cash Out" to
 * an agent, "Payment" to a merchant, the amount, the reference, the PIN, and
 * the TrxID from the confirmation SMS.
 *
 * Written for this service from how Bangladeshi checkouts word the same steps
 * (read, not copied): the manual-payment templates of UddoktaPay-style PHP
 * checkouts ("*247# ডায়াল করে আপনার BKASH মোবাইল মেনুতে অথবা BKASH অ্যাপে যান",
 * "Send Money" / "Cash Out", "নিশ্চিত করতে আপনার BKASH পিন লিখুন"), the bKash
 * "Payments" USSD steps in github.com/6879/TourAndTravel
 * resources/views/project/subscriber/subscribe.blade.php (merchant number,
 * amount, reference, counter number 1, PIN), and the Nagad "*167# … Send Money
 * … Transaction ID" steps common to PipraPay and OwnPay manual gateways.
 */
const WALLETS = [
  { match: /bkash/i, name: { en: 'bKash', bn: 'বিকাশ' }, ussd: '*247#' },
  { match: /nagad/i, name: { en: 'Nagad', bn: 'নগদ' }, ussd: '*167#' },
  { match: /rocket|dbbl/i, name: { en: 'Rocket', bn: 'রকেট' }, ussd: '*322#' },
  { match: /upay/i, name: { en: 'Upay', bn: 'উপায়' }, ussd: '*268#' },
] as const;

export interface WalletStepsInput {
  code: string;
  name: string;
  receiving_account: string | null;
  receiving_account_type: 'personal' | 'agent' | 'merchant' | null;
  amount_to_send: string;
  currency: string;
}

/** The steps for a manual gateway of a known wallet (by its code or name); null for any other gateway. */
export function walletSteps(lang: Lang, g: WalletStepsInput, reference: string | null): SafeHtml | null {
  const wallet = WALLETS.find((w) => w.match.test(g.code) || w.match.test(g.name));
  if (!wallet || !g.receiving_account) return null;
  const type = g.receiving_account_type ?? 'personal';
  const name = wallet.name[lang];
  const strong = (v: string) => html`<strong class="mono">${v}</strong>`;
  const steps: SafeHtml[] = [
    tHtml(lang, 'step_open', { wallet: name, ussd: strong(wallet.ussd) }),
    tHtml(lang, type === 'agent' ? 'step_cash_out' : type === 'merchant' ? 'step_payment' : 'step_send_money'),
    tHtml(lang, type === 'agent' ? 'step_number_agent' : type === 'merchant' ? 'step_number_merchant' : 'step_number_personal', { number: strong(g.receiving_account) }),
    tHtml(lang, 'step_amount', { amount: html`<strong>${formatMoney(lang, g.amount_to_send, g.currency)}</strong>` }),
  ];
  if (reference && type !== 'agent') steps.push(tHtml(lang, 'step_reference', { reference: strong(reference) }));
  if (type === 'merchant') steps.push(tHtml(lang, 'step_counter'));
  steps.push(tHtml(lang, 'step_pin', { wallet: name }), tHtml(lang, 'step_trxid', { wallet: name }));
  return html`<ol class="wallet-steps">${steps.map((s) => html`<li>${s}</li>`)}</ol>`;
}
