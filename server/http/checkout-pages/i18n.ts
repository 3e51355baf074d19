/**
 * Languages of the pages customers read (checkout, payment link, sandbox,
 * status and error pages): English and Bangla.
 *
 * How another customer page uses it (the invoice page, say):
 *
 *   import { pageLanguage, t, tHtml, withCatalog, formatMoney, formatMomentIn } from '../checkout-pages/i18n.ts';
 *   const lang = pageLanguage(req, res);          // explicit choice (?lang=, then the cookie), else Accept-Language, else 'en';
 *                                                 // also sets `Vary: Accept-Language, Cookie` and remembers a ?lang= choice
 *   t(lang, 'pay_to')                             // a shared string
 *   const inv = withCatalog({ en: { due: 'Due {date}' }, bn: { due: '{date} এর মধ্যে' } });
 *   inv.t(lang, 'due', { date })                  // the page's own strings; a key missing in `bn` is a compile error
 *   layout({ lang, title, body })                 // <html lang> and the language switch come with the shell
 *
 * A catalog is a plain object: `en` is the reference, `bn` is typed as a
 * `Catalog` (every key of `en`, nothing else), so a string added in English and
 * forgotten in Bangla does not compile. `{name}` in a string is filled from the
 * values given; `tHtml` escapes the text and takes SafeHtml values as they are.
 */
import type { Request, Response } from 'express';
import { formatMoment, formatNumberBn } from '../../domain/display.ts';
// The language-aware number, money and day formats live with the other display helpers (the invoice e-mail and PDF use them too).
export { currencyLabel, formatAmountIn, formatDayIn, formatMoney, formatNumberBn, formatQuantityIn } from '../../domain/display.ts';
import { html, type SafeHtml } from './html.ts';

export const LANGUAGES = ['en', 'bn'] as const;
export type Lang = (typeof LANGUAGES)[number];

/** The cookie that remembers a customer's explicit choice, for a year; no other use. */
export const LANGUAGE_COOKIE = 'checkout_lang';
const COOKIE_MAX_AGE = 365 * 24 * 3600;

const en = {
  lang_name: 'English',
  switch_label: 'Language',
  pay_to: 'Pay to',
  reference: 'Reference',
  amount_due: 'Amount due',
  amount_paid: 'Amount paid',
  amount: 'Amount',
  pay_before: 'Pay before',
  secure_checkout: 'Secure checkout',
  support: 'Need help? Contact {brand}:',
  logo_alt: '{brand} logo',
  page_title_pay: 'Pay {brand}',
  choose_how: 'Choose how to pay',
  no_method: 'No payment method can take this payment right now. Please contact {brand}.',
  needs_js: 'This page needs JavaScript turned on to send your payment.',
  converted_from: 'Converted from {amount}',
  converted_at: 'at 1 {from} = {rate} {to}',
  fee_included: 'Includes the {gateway} fee of {fee}.',
  send_exactly: 'Send exactly',
  copy: 'Copy',
  copy_amount: 'Copy amount',
  copy_account: 'Copy account number',
  to_account: 'To {gateway} account',
  trx_label: "Transaction ID from {gateway}'s confirmation",
  trx_placeholder: 'e.g. 8N7A6D5C4B',
  sender_label: 'Number you sent from',
  optional: '(optional)',
  sent_button: 'I have sent the money',
  redirect_hint: 'You will be taken to {gateway} to finish paying.',
  pay_button: 'Pay {amount}',
  how_to_pay: 'How to pay with {gateway}',
  failed_notice: 'Your payment with {gateway} did not go through{reason}. You can try again.',
  cannot_change: 'Wrong transaction ID? It can no longer be changed here; please contact the shop.',
  change_summary: 'Wrong transaction ID? Change it',
  correct_trx_label: 'Correct transaction ID from {gateway}',
  changes_left_one: 'You can change it one more time.',
  changes_left_many: 'You can change it {n} more times.',
  change_button: 'Change transaction ID',
  checking_phone_title: "Checking with the merchant's phone",
  checking_phone_text: "We received your transaction ID {trx} for {amount} sent with {gateway}, and are asking the merchant's phone for the {gateway} confirmation. This usually takes a few seconds.",
  waiting_verification_title: 'Waiting for verification',
  waiting_verification_text: 'We received your transaction ID {trx} for {amount} sent with {gateway}.',
  waiting_gateway_title: 'Waiting for {gateway}',
  waiting_gateway_text: '{gateway} has not confirmed your payment of {amount} yet.',
  updates_itself: 'This page updates by itself; you can keep it open. Reference {ref}',
  continue_on: 'Continue on {gateway}',
  received_title: 'Payment received',
  received_text: '{amount} paid with {gateway}. Reference {ref}',
  taking_back: 'Taking you back to {brand}…',
  return_to: 'Return to {brand}',
  close_page: 'You can close this page.',
  expired_title: 'Payment link has expired',
  expired_text: 'This link can no longer be paid. Ask {brand} for a new payment link.',
  back_to: 'Back to {brand}',
  canceled_title: 'Payment canceled',
  canceled_text: '{brand} canceled this payment; it can no longer be paid.',
  not_payable_title: 'This payment cannot be paid here',
  please_contact: '{text} Please contact {brand}.',
  cancel_return: 'Cancel and return to {brand}',
  // Payment link page
  link_amount_label: 'Amount ({currency})',
  link_at_least: 'at least {amount}',
  link_at_most: 'at most {amount}',
  link_placeholder: 'e.g. 500',
  link_continue: 'Continue to payment',
  link_expired: 'This payment link has expired.',
  link_inactive: 'This payment link is no longer active.',
  link_used: 'This payment link has already been used.',
  link_unavailable: 'This payment link cannot take payments right now.',
  link_unavailable_title: 'Payment link unavailable',
  link_ask_new: 'Ask {brand} for a new payment link.',
  link_not_found: 'Payment link not found',
  link_not_found_text: 'This payment link is not valid. Check the link you were given, or ask the shop for a new one.',
  // Status and error pages
  not_found_title: 'Payment not found',
  not_found_text: 'This payment link is not valid. Check the link you were given, or ask the shop for a new one.',
  disabled_title: 'Payments unavailable',
  disabled_heading: 'This merchant cannot take payments right now',
  disabled_text: 'Nothing has been charged on this page. Please contact the shop that sent you this link.',
  error_title: 'Something went wrong',
  error_text: 'We could not load this page. Please try again in a moment.',
  request_id: 'Request {id}',
  too_many_title: 'Too many requests',
  too_many_text_in: 'Too many requests came from your connection. Please try again in {seconds} seconds.',
  too_many_text: 'Too many requests came from your connection. Please try again in a moment.',
  // Sandbox page
  sandbox_banner: 'Sandbox: test payment, no real money moves',
  sandbox_decided: 'Payment {decision}',
  sandbox_approved: 'approved',
  sandbox_declined: 'declined',
  sandbox_told: 'The sandbox has told {brand} about it.',
  sandbox_back: 'Back to the checkout',
  sandbox_expired: 'This payment session has expired',
  sandbox_approve: 'Approve payment',
  sandbox_decline: 'Decline',
  sandbox_title: '{gateway}: pay {brand}',
  // checkout.js (sent in the page, see clientStrings)
  js_enter_trx: 'Enter the transaction ID you received.',
  js_enter_correct_trx: 'Enter the correct transaction ID.',
  js_offline: 'Could not reach the server. Check your connection and try again.',
  js_generic: 'Something went wrong. Please try again.',
  js_copied: 'Copied',
  js_select_copy: 'Select and copy',
  js_canceled: 'Payment cancelled. You can close this page.',
  // The API's refusals the page shows, by code (in English the API's own message is shown)
  js_code_GATEWAY_TRX_ID_TAKEN: 'This transaction ID was already used.',
  js_code_SUBMISSION_LIMIT_REACHED: 'Too many transaction IDs were tried for this payment; please contact the shop.',
  js_code_VALIDATION_ERROR: 'Check the transaction ID and the number, then try again.',
  js_code_RATE_LIMITED: 'Too many requests. Please wait a moment and try again.',
  js_code_GATEWAY_UNAVAILABLE: 'This payment method cannot take the payment right now.',
  js_code_AMOUNT_BELOW_MINIMUM: 'The amount is below what this payment method accepts; choose another one.',
  js_code_AMOUNT_EXCEEDS_MAXIMUM: 'The amount is above what this payment method accepts; choose another one.',
  js_code_CURRENCY_CONVERSION_FAILED: 'This payment method cannot take this currency right now; choose another one.',
  js_code_INVALID_STATE: 'This payment cannot be changed now. Reload the page to see where it stands.',
  // Wallet instructions: steps as the wallets' own menus name them
  step_open: 'Open the {wallet} app, or dial {ussd} on the phone of your {wallet} account.',
  step_send_money: 'Choose "Send Money".',
  step_cash_out: 'Choose "Cash Out".',
  step_payment: 'Choose "Payment" (Merchant Pay).',
  step_number_personal: 'Enter the receiving number {number}.',
  step_number_agent: 'Enter the agent number {number}.',
  step_number_merchant: 'Enter the merchant number {number}.',
  step_amount: 'Enter the amount {amount}, exactly.',
  step_reference: 'Reference: write {reference} (or leave it empty if the menu does not ask).',
  step_counter: 'Counter number: enter 1 if asked.',
  step_pin: 'Enter your {wallet} PIN to confirm.',
  step_trxid: '{wallet} sends you an SMS with the TrxID (transaction ID): enter it below.',
} as const;

export type CatalogKey = keyof typeof en;
/** Every key of the English catalog, each a string: what `bn` must be. */
export type Catalog<K extends string = CatalogKey> = { readonly [P in K]: string };

const bn: Catalog = {
  lang_name: 'বাংলা',
  switch_label: 'ভাষা',
  pay_to: 'প্রাপক',
  reference: 'রেফারেন্স',
  amount_due: 'পরিশোধযোগ্য পরিমাণ',
  amount_paid: 'পরিশোধিত পরিমাণ',
  amount: 'পরিমাণ',
  pay_before: 'পরিশোধের শেষ সময়',
  secure_checkout: 'নিরাপদ পেমেন্ট',
  support: 'সাহায্য দরকার? {brand}-এর সাথে যোগাযোগ করুন:',
  logo_alt: '{brand}-এর লোগো',
  page_title_pay: '{brand}-কে পেমেন্ট করুন',
  choose_how: 'কীভাবে পেমেন্ট করবেন তা বেছে নিন',
  no_method: 'এই মুহূর্তে কোনো পেমেন্ট মাধ্যম এই পেমেন্ট নিতে পারছে না। অনুগ্রহ করে {brand}-এর সাথে যোগাযোগ করুন।',
  needs_js: 'পেমেন্ট পাঠাতে এই পেজে JavaScript চালু থাকা দরকার।',
  converted_from: '{amount} থেকে রূপান্তরিত',
  converted_at: '১ {from} = {rate} {to} হারে',
  fee_included: '{gateway}-এর চার্জ {fee} সহ।',
  send_exactly: 'ঠিক এই পরিমাণ পাঠান',
  copy: 'কপি',
  copy_amount: 'পরিমাণ কপি করুন',
  copy_account: 'অ্যাকাউন্ট নম্বর কপি করুন',
  to_account: 'এই {gateway} নম্বরে',
  trx_label: '{gateway}-এর কনফার্মেশন SMS-এর ট্রানজেকশন আইডি (TrxID)',
  trx_placeholder: 'যেমন 8N7A6D5C4B',
  sender_label: 'যে নম্বর থেকে পাঠিয়েছেন',
  optional: '(ঐচ্ছিক)',
  sent_button: 'আমি টাকা পাঠিয়েছি',
  redirect_hint: 'পেমেন্ট শেষ করতে আপনাকে {gateway}-এ নিয়ে যাওয়া হবে।',
  pay_button: '{amount} পেমেন্ট করুন',
  how_to_pay: '{gateway} দিয়ে যেভাবে পেমেন্ট করবেন',
  failed_notice: '{gateway} দিয়ে আপনার পেমেন্ট সম্পন্ন হয়নি{reason}। আবার চেষ্টা করতে পারেন।',
  cannot_change: 'ভুল ট্রানজেকশন আইডি? এখানে আর বদলানো যাবে না; অনুগ্রহ করে দোকানের সাথে যোগাযোগ করুন।',
  change_summary: 'ভুল ট্রানজেকশন আইডি? বদলে দিন',
  correct_trx_label: '{gateway}-এর সঠিক ট্রানজেকশন আইডি',
  changes_left_one: 'আর একবার বদলাতে পারবেন।',
  changes_left_many: 'আর {n} বার বদলাতে পারবেন।',
  change_button: 'ট্রানজেকশন আইডি বদলান',
  checking_phone_title: 'মার্চেন্টের ফোনে যাচাই করা হচ্ছে',
  checking_phone_text: '{gateway} দিয়ে পাঠানো {amount}-এর ট্রানজেকশন আইডি {trx} পেয়েছি, মার্চেন্টের ফোন থেকে {gateway}-এর কনফার্মেশন চাওয়া হচ্ছে। সাধারণত কয়েক সেকেন্ড লাগে।',
  waiting_verification_title: 'যাচাইয়ের অপেক্ষায়',
  waiting_verification_text: '{gateway} দিয়ে পাঠানো {amount}-এর ট্রানজেকশন আইডি {trx} আমরা পেয়েছি।',
  waiting_gateway_title: '{gateway}-এর অপেক্ষায়',
  waiting_gateway_text: '{gateway} এখনো আপনার {amount} পেমেন্ট নিশ্চিত করেনি।',
  updates_itself: 'এই পেজ নিজে থেকেই আপডেট হয়; খোলা রাখতে পারেন। রেফারেন্স {ref}',
  continue_on: '{gateway}-এ চালিয়ে যান',
  received_title: 'পেমেন্ট পাওয়া গেছে',
  received_text: '{gateway} দিয়ে {amount} পরিশোধিত। রেফারেন্স {ref}',
  taking_back: 'আপনাকে {brand}-এ ফিরিয়ে নেওয়া হচ্ছে…',
  return_to: '{brand}-এ ফিরে যান',
  close_page: 'এখন পেজটি বন্ধ করতে পারেন।',
  expired_title: 'পেমেন্ট লিংকের মেয়াদ শেষ',
  expired_text: 'এই লিংকে আর পেমেন্ট করা যাবে না। {brand}-এর কাছে নতুন পেমেন্ট লিংক চান।',
  back_to: '{brand}-এ ফিরে যান',
  canceled_title: 'পেমেন্ট বাতিল',
  canceled_text: '{brand} এই পেমেন্ট বাতিল করেছে; এটি আর পরিশোধ করা যাবে না।',
  not_payable_title: 'এই পেমেন্ট এখানে পরিশোধ করা যাবে না',
  please_contact: '{text} অনুগ্রহ করে {brand}-এর সাথে যোগাযোগ করুন।',
  cancel_return: 'বাতিল করে {brand}-এ ফিরে যান',
  link_amount_label: 'পরিমাণ ({currency})',
  link_at_least: 'কমপক্ষে {amount}',
  link_at_most: 'সর্বোচ্চ {amount}',
  link_placeholder: 'যেমন 500',
  link_continue: 'পেমেন্টে এগিয়ে যান',
  link_expired: 'এই পেমেন্ট লিংকের মেয়াদ শেষ হয়ে গেছে।',
  link_inactive: 'এই পেমেন্ট লিংকটি আর চালু নেই।',
  link_used: 'এই পেমেন্ট লিংকটি আগেই ব্যবহার করা হয়েছে।',
  link_unavailable: 'এই পেমেন্ট লিংকে এখন পেমেন্ট নেওয়া যাচ্ছে না।',
  link_unavailable_title: 'পেমেন্ট লিংক পাওয়া যাচ্ছে না',
  link_ask_new: '{brand}-এর কাছে নতুন পেমেন্ট লিংক চান।',
  link_not_found: 'পেমেন্ট লিংক পাওয়া যায়নি',
  link_not_found_text: 'এই পেমেন্ট লিংকটি সঠিক নয়। যে লিংক পেয়েছেন তা মিলিয়ে দেখুন, অথবা দোকানের কাছে নতুন লিংক চান।',
  not_found_title: 'পেমেন্ট পাওয়া যায়নি',
  not_found_text: 'এই পেমেন্ট লিংকটি সঠিক নয়। যে লিংক পেয়েছেন তা মিলিয়ে দেখুন, অথবা দোকানের কাছে নতুন লিংক চান।',
  disabled_title: 'পেমেন্ট নেওয়া বন্ধ',
  disabled_heading: 'এই মার্চেন্ট এখন পেমেন্ট নিতে পারছে না',
  disabled_text: 'এই পেজে কোনো টাকা কাটা হয়নি। যে দোকান এই লিংক পাঠিয়েছে তাদের সাথে যোগাযোগ করুন।',
  error_title: 'কিছু একটা সমস্যা হয়েছে',
  error_text: 'পেজটি খোলা যায়নি। একটু পরে আবার চেষ্টা করুন।',
  request_id: 'অনুরোধ {id}',
  too_many_title: 'অনেক বেশি অনুরোধ',
  too_many_text_in: 'আপনার সংযোগ থেকে অনেক বেশি অনুরোধ এসেছে। {seconds} সেকেন্ড পরে আবার চেষ্টা করুন।',
  too_many_text: 'আপনার সংযোগ থেকে অনেক বেশি অনুরোধ এসেছে। একটু পরে আবার চেষ্টা করুন।',
  sandbox_banner: 'স্যান্ডবক্স: পরীক্ষামূলক পেমেন্ট, কোনো আসল টাকা যায় না',
  sandbox_decided: 'পেমেন্ট {decision}',
  sandbox_approved: 'অনুমোদিত',
  sandbox_declined: 'প্রত্যাখ্যাত',
  sandbox_told: 'স্যান্ডবক্স {brand}-কে এটি জানিয়েছে।',
  sandbox_back: 'চেকআউটে ফিরে যান',
  sandbox_expired: 'এই পেমেন্ট সেশনের মেয়াদ শেষ',
  sandbox_approve: 'পেমেন্ট অনুমোদন করুন',
  sandbox_decline: 'প্রত্যাখ্যান',
  sandbox_title: '{gateway}: {brand}-কে পেমেন্ট',
  js_enter_trx: 'যে ট্রানজেকশন আইডি পেয়েছেন তা লিখুন।',
  js_enter_correct_trx: 'সঠিক ট্রানজেকশন আইডি লিখুন।',
  js_offline: 'সার্ভারে পৌঁছানো যায়নি। ইন্টারনেট সংযোগ দেখে আবার চেষ্টা করুন।',
  js_generic: 'কিছু একটা সমস্যা হয়েছে। আবার চেষ্টা করুন।',
  js_copied: 'কপি হয়েছে',
  js_select_copy: 'সিলেক্ট করে কপি করুন',
  js_canceled: 'পেমেন্ট বাতিল হয়েছে। এখন পেজটি বন্ধ করতে পারেন।',
  js_code_GATEWAY_TRX_ID_TAKEN: 'এই ট্রানজেকশন আইডি আগেই ব্যবহার করা হয়েছে।',
  js_code_SUBMISSION_LIMIT_REACHED: 'এই পেমেন্টে অনেকবার ট্রানজেকশন আইডি দেওয়া হয়েছে; অনুগ্রহ করে দোকানের সাথে যোগাযোগ করুন।',
  js_code_VALIDATION_ERROR: 'ট্রানজেকশন আইডি ও নম্বরটি মিলিয়ে দেখে আবার চেষ্টা করুন।',
  js_code_RATE_LIMITED: 'অনেক বেশি অনুরোধ এসেছে। একটু অপেক্ষা করে আবার চেষ্টা করুন।',
  js_code_GATEWAY_UNAVAILABLE: 'এই পেমেন্ট মাধ্যম এখন পেমেন্টটি নিতে পারছে না।',
  js_code_AMOUNT_BELOW_MINIMUM: 'এই পরিমাণ এই পেমেন্ট মাধ্যমের সর্বনিম্ন সীমার চেয়ে কম; অন্য একটি মাধ্যম বেছে নিন।',
  js_code_AMOUNT_EXCEEDS_MAXIMUM: 'এই পরিমাণ এই পেমেন্ট মাধ্যমের সর্বোচ্চ সীমার চেয়ে বেশি; অন্য একটি মাধ্যম বেছে নিন।',
  js_code_CURRENCY_CONVERSION_FAILED: 'এই পেমেন্ট মাধ্যম এখন এই মুদ্রায় পেমেন্ট নিতে পারছে না; অন্য একটি মাধ্যম বেছে নিন।',
  js_code_INVALID_STATE: 'এই পেমেন্ট এখন বদলানো যাবে না। এর অবস্থা দেখতে পেজটি আবার লোড করুন।',
  step_open: '{wallet} অ্যাপ খুলুন, অথবা আপনার {wallet} অ্যাকাউন্টের ফোন থেকে {ussd} ডায়াল করুন।',
  step_send_money: '"Send Money" বেছে নিন।',
  step_cash_out: '"Cash Out" বেছে নিন।',
  step_payment: '"Payment" (মার্চেন্ট পেমেন্ট) বেছে নিন।',
  step_number_personal: 'প্রাপক নম্বর হিসেবে {number} লিখুন।',
  step_number_agent: 'এজেন্ট নম্বর হিসেবে {number} লিখুন।',
  step_number_merchant: 'মার্চেন্ট নম্বর হিসেবে {number} লিখুন।',
  step_amount: 'টাকার পরিমাণ লিখুন: ঠিক {amount}।',
  step_reference: 'রেফারেন্সে {reference} লিখুন (মেনু না চাইলে খালি রাখুন)।',
  step_counter: 'কাউন্টার নম্বর চাইলে 1 লিখুন।',
  step_pin: 'নিশ্চিত করতে আপনার {wallet} পিন দিন।',
  step_trxid: '{wallet} আপনাকে একটি SMS পাঠাবে, তাতে TrxID (ট্রানজেকশন আইডি) থাকবে: সেটি নিচের ঘরে লিখুন।',
};

/** The shared catalogs; exported for the completeness test and for pages that list them. */
export const catalogs: { readonly [L in Lang]: Catalog } = { en, bn };

type Vars = Record<string, string | number | SafeHtml | null | undefined>;

/** The template cut at its `{name}`s: text pieces and the values in their places (unknown names stay as written). */
function pieces(template: string, vars: Vars | undefined): (string | number | SafeHtml | null | undefined)[] {
  const out: (string | number | SafeHtml | null | undefined)[] = [];
  let last = 0;
  for (const m of template.matchAll(/\{(\w+)\}/g)) {
    out.push(template.slice(last, m.index));
    out.push(vars && m[1]! in vars ? vars[m[1]!] : m[0]);
    last = m.index + m[0].length;
  }
  out.push(template.slice(last));
  return out;
}

const plain = (v: Vars[string]): string => (v === null || v === undefined ? '' : typeof v === 'object' ? v.text : String(v));

function translator<K extends string>(cats: { readonly [L in Lang]: Catalog<K> }) {
  return {
    /** The string in the language, `{name}`s filled as plain text (for titles, attributes, JSON). */
    t(lang: Lang, key: K, vars?: Vars): string {
      return pieces(cats[lang][key], vars).map(plain).join('');
    },
    /** The string as HTML: `html` escapes its text and plain values, SafeHtml values go in as they are. */
    tHtml(lang: Lang, key: K, vars?: Vars): SafeHtml {
      return html`${pieces(cats[lang][key], vars)}`;
    },
  };
}

const shared = translator<CatalogKey>(catalogs);
export const t = shared.t;
export const tHtml = shared.tHtml;

/**
 * A page's own strings on top of the shared ones: `{ en, bn }` where `bn` must
 * have every key of `en`. Returns `t`/`tHtml` that know both sets of keys.
 */
export function withCatalog<const E extends Record<string, string>>(extra: { en: E; bn: Catalog<Extract<keyof E, string>> }) {
  type K = CatalogKey | Extract<keyof E, string>;
  const merged = { en: { ...en, ...extra.en }, bn: { ...bn, ...extra.bn } } as unknown as { readonly [L in Lang]: Catalog<K> };
  return translator<K>(merged);
}

// ---------------------------------------------------------------------------
// Choosing the language

export const isLang = (v: unknown): v is Lang => typeof v === 'string' && (LANGUAGES as readonly string[]).includes(v);

/**
 * `Accept-Language` (RFC 9110 §12.5.4) as ranges with weights, best first;
 * ranges with q=0 ("not this one") and malformed parts are dropped, ties keep
 * the header's order.
 */
export function parseAcceptLanguage(header: string | undefined | null): { range: string; q: number }[] {
  if (!header) return [];
  const out: { range: string; q: number; i: number }[] = [];
  header.split(',').forEach((part, i) => {
    const [rangeRaw, ...params] = part.trim().split(';');
    const range = (rangeRaw ?? '').trim().toLowerCase();
    if (!/^(\*|[a-z]{1,8}(-[a-z0-9]{1,8})*)$/.test(range)) return;
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*(0(\.\d{0,3})?|1(\.0{0,3})?)\s*$/i.exec(p);
      if (m) q = Number(m[1]);
      else if (/^\s*q\s*=/i.test(p)) return; // a malformed weight: the whole range is ignored
    }
    if (q > 0) out.push({ range, q, i });
  });
  return out.sort((a, b) => b.q - a.q || a.i - b.i).map(({ range, q }) => ({ range, q }));
}

/** The best of our languages for the header (by primary subtag: `bn-BD` and `bn-IN` are Bangla), or null. */
export function negotiateLanguage(header: string | undefined | null): Lang | null {
  const ranges = parseAcceptLanguage(header);
  // A range excluded with q=0 must not come back through `*`.
  const excluded = new Set(
    (header ?? '')
      .split(',')
      .map((p) => p.trim().toLowerCase())
      .filter((p) => /;\s*q\s*=\s*0(\.0{0,3})?\s*$/.test(p))
      .map((p) => p.split(';')[0]!.trim().split('-')[0]!),
  );
  for (const { range } of ranges) {
    if (range === '*') return LANGUAGES.find((l) => !excluded.has(l)) ?? null;
    const primary = range.split('-')[0]!;
    if (isLang(primary)) return primary;
  }
  return null;
}

function cookieLang(req: Request): Lang | null {
  const header = req.get('cookie');
  if (!header) return null;
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === LANGUAGE_COOKIE) {
      const v = rest.join('=').trim();
      return isLang(v) ? v : null;
    }
  }
  return null;
}

/**
 * The page's language: `?lang=` (the switch on the page; remembered in a
 * cookie when `res` is given), then that cookie, then `Accept-Language`, then
 * English. With `res`, says `Vary: Accept-Language, Cookie` so no cache hands
 * one customer's language to another.
 */
export function pageLanguage(req: Request, res?: Response): Lang {
  const asked = typeof req.query?.lang === 'string' ? req.query.lang : null;
  if (res) res.vary('Accept-Language').vary('Cookie');
  if (isLang(asked)) {
    res?.cookie(LANGUAGE_COOKIE, asked, { maxAge: COOKIE_MAX_AGE * 1000, sameSite: 'lax', httpOnly: true, secure: req.secure, path: '/' });
    return asked;
  }
  return cookieLang(req) ?? negotiateLanguage(req.get('accept-language')) ?? 'en';
}

/** The switch on each page: plain links (`?lang=`), the current language marked, no script needed. */
export function languageSwitch(lang: Lang, path: string): SafeHtml {
  return html`<nav class="lang-switch" aria-label="${t(lang, 'switch_label')}">${LANGUAGES.map((l) =>
    l === lang
      ? html`<span class="lang-current" aria-current="true" lang="${l}">${catalogs[l].lang_name}</span>`
      : html`<a href="${path}?lang=${l}" lang="${l}" hreflang="${l}">${catalogs[l].lang_name}</a>`,
  )}</nav>`;
}

// ---------------------------------------------------------------------------
// Numbers, money and moments as Bangladeshi customers read them

/** The zone the checkout pages read times in: the brand's, and Bangladesh's when the brand kept the default UTC. */
export function pageTimeZone(brandZone: string | null | undefined): string {
  return brandZone && brandZone !== 'UTC' && brandZone !== 'Etc/UTC' ? brandZone : 'Asia/Dhaka';
}

/** Bangla names of the parts of the day, as clocks are read in Bangladesh ("রাত ১১:৩১", "সকাল ৯:০৫"). */
function dayPeriodBn(hour: number): string {
  if (hour >= 4 && hour < 12) return 'সকাল';
  if (hour >= 12 && hour < 15) return 'দুপুর';
  if (hour >= 15 && hour < 18) return 'বিকাল';
  if (hour >= 18 && hour < 20) return 'সন্ধ্যা';
  return 'রাত';
}

/**
 * A moment in the zone, saying whose clock: English as the receipts write it
 * ("28 Nov 2026, 23:31 (UTC+06:00 Asia/Dhaka)"), Bangla as Bangladeshi customers
 * read it ("২৮ নভেম্বর ২০২৬, রাত ১১:৩১ (বাংলাদেশ সময়)").
 */
export function formatMomentIn(lang: Lang, iso: string, timeZone: string): string {
  if (lang === 'en') return formatMoment(iso, timeZone);
  let zone = timeZone;
  let parts: Intl.DateTimeFormatPart[];
  const fmt = (z: string) =>
    new Intl.DateTimeFormat('bn-BD', { timeZone: z, day: 'numeric', month: 'long', year: 'numeric', hour: 'numeric', minute: '2-digit', hourCycle: 'h23' }).formatToParts(new Date(iso));
  try {
    parts = fmt(zone);
  } catch {
    zone = 'UTC';
    parts = fmt(zone);
  }
  const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((x) => x.type === type)?.value ?? '';
  const hour23 = Number(new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', hourCycle: 'h23' }).format(new Date(iso)));
  const hour12 = hour23 % 12 === 0 ? 12 : hour23 % 12;
  const label = zone === 'Asia/Dhaka' ? 'বাংলাদেশ সময়' : zone;
  return `${get('day')} ${get('month')} ${get('year')}, ${dayPeriodBn(hour23)} ${formatNumberBn(String(hour12))}:${get('minute')} (${label})`;
}

/**
 * The strings checkout.js shows (status updates, errors), handed to it in the
 * page as JSON. The API's refusals are in English: in Bangla the page shows its
 * own words for the codes a customer meets (`code_<CODE>`), the API's message otherwise.
 */
export function clientStrings(lang: Lang): Record<string, string> {
  const keys = (Object.keys(en) as CatalogKey[]).filter((k) => k.startsWith('js_') && (lang !== 'en' || !k.startsWith('js_code_')));
  return Object.fromEntries(keys.map((k) => [k.slice(3), t(lang, k)]));
}
