/**
 * Every word a customer reads about an invoice: the hosted page
 * (server/http/checkout-pages/invoice-page.ts), the PDF (pdf.ts) and the
 * e-mail (mail.ts). One catalog, keys → text, so the checkout pages' language
 * choice can pick a translation without touching the templates. `{name}`
 * placeholders are filled by `t()`; values are escaped by the template that
 * shows them, never here.
 */
export const invoiceCatalog = {
  en: {
    pageTitle: 'Invoice {number} from {brand}',
    invoice: 'Invoice',
    from: 'From',
    billedTo: 'Billed to',
    number: 'Invoice number',
    dueDate: 'Due date',
    status: 'Status',
    description: 'Description',
    quantity: 'Qty',
    unitPrice: 'Unit price',
    amount: 'Amount',
    subtotal: 'Subtotal',
    total: 'Total',
    amountPaid: 'Paid so far',
    amountRemaining: 'Amount due',
    memo: 'Note',
    payNow: 'Pay {amount} now',
    payPart: 'Or pay part of it',
    payPartLabel: 'Amount to pay now ({currency})',
    payPartButton: 'Pay this amount',
    downloadPdf: 'Download PDF',
    testBanner: 'Test invoice: no real money moves.',
    'status.open': 'Open',
    'status.overdue': 'Overdue',
    'status.paid': 'Paid',
    'status.void': 'Void',
    'status.draft': 'Draft',
    paidText: 'This invoice is paid in full. Thank you.',
    voidText: 'This invoice was cancelled by {brand} and cannot be paid.',
    notFoundTitle: 'Invoice not found',
    notFoundText: 'This invoice link is not valid. Check the link you were given, or ask the shop for a new one.',
    enterAmount: 'Enter an amount like 500 or 500.50',
    atMost: 'Enter at most {amount} {currency}',
    atLeast: 'Enter at least {amount} {currency}',
    secure: 'Secure checkout',
    mailSubject: '{test}Invoice {number} from {brand}: {amount} {currency} due {due}',
    mailTestPrefix: '[TEST] ',
    mailGreeting: 'Hello{name},',
    mailBody: '{brand} sent you invoice {number} for {amount} {currency}, due on {due}.',
    mailLink: 'View and pay it here: {url}',
    mailTest: 'This is a TEST invoice: it was made in test mode and paying it moves no real money.',
    mailFooter: 'Questions about it go to {brand}.',
  },
  bn: {
    pageTitle: '{brand} থেকে চালান {number}',
    invoice: 'চালান',
    from: 'প্রেরক',
    billedTo: 'প্রাপক',
    number: 'চালান নম্বর',
    dueDate: 'পরিশোধের শেষ তারিখ',
    status: 'অবস্থা',
    description: 'বিবরণ',
    quantity: 'পরিমাণ',
    unitPrice: 'একক মূল্য',
    amount: 'মোট',
    subtotal: 'উপমোট',
    total: 'সর্বমোট',
    amountPaid: 'এ পর্যন্ত পরিশোধিত',
    amountRemaining: 'বাকি',
    memo: 'নোট',
    payNow: 'এখন {amount} পরিশোধ করুন',
    payPart: 'অথবা আংশিক পরিশোধ করুন',
    payPartLabel: 'এখন কত পরিশোধ করবেন ({currency})',
    payPartButton: 'এই পরিমাণ পরিশোধ করুন',
    downloadPdf: 'PDF ডাউনলোড করুন',
    testBanner: 'টেস্ট চালান: কোনো আসল টাকা লেনদেন হবে না।',
    'status.open': 'খোলা',
    'status.overdue': 'মেয়াদোত্তীর্ণ',
    'status.paid': 'পরিশোধিত',
    'status.void': 'বাতিল',
    'status.draft': 'খসড়া',
    paidText: 'এই চালান সম্পূর্ণ পরিশোধিত। ধন্যবাদ।',
    voidText: '{brand} এই চালানটি বাতিল করেছে, এটি আর পরিশোধ করা যাবে না।',
    notFoundTitle: 'চালান পাওয়া যায়নি',
    notFoundText: 'এই চালানের লিংকটি সঠিক নয়। লিংকটি যাচাই করুন, অথবা দোকানের কাছে নতুন লিংক চান।',
    enterAmount: '৫০০ বা ৫০০.৫০ এর মতো একটি পরিমাণ লিখুন',
    atMost: 'সর্বোচ্চ {amount} {currency} লিখুন',
    atLeast: 'কমপক্ষে {amount} {currency} লিখুন',
    secure: 'নিরাপদ পেমেন্ট',
    mailSubject: '{test}{brand} থেকে চালান {number}: {amount} {currency}, শেষ তারিখ {due}',
    mailTestPrefix: '[টেস্ট] ',
    mailGreeting: 'প্রিয় গ্রাহক{name},',
    mailBody: '{brand} আপনাকে {amount} {currency} এর চালান {number} পাঠিয়েছে, পরিশোধের শেষ তারিখ {due}।',
    mailLink: 'এখানে দেখুন ও পরিশোধ করুন: {url}',
    mailTest: 'এটি একটি টেস্ট চালান: টেস্ট মোডে তৈরি, এটি পরিশোধে কোনো আসল টাকা লেনদেন হয় না।',
    mailFooter: 'প্রশ্ন থাকলে {brand} এর সাথে যোগাযোগ করুন।',
  },
} as const satisfies Record<string, Record<string, string>>;

export type InvoiceLanguage = keyof typeof invoiceCatalog;
export type InvoiceTextKey = keyof (typeof invoiceCatalog)['en'];
export const invoiceLanguages = Object.keys(invoiceCatalog) as InvoiceLanguage[];

/** The text of `key` in `lang` with its `{placeholders}` filled. */
export function invoiceText(lang: InvoiceLanguage, key: InvoiceTextKey, vars: Record<string, string> = {}): string {
  const text: string = invoiceCatalog[lang][key];
  return text.replace(/\{(\w+)\}/g, (m, name: string) => vars[name] ?? m);
}

/** A translator bound to one language. */
export const translator = (lang: InvoiceLanguage) => (key: InvoiceTextKey, vars?: Record<string, string>) => invoiceText(lang, key, vars);
export type Translate = ReturnType<typeof translator>;
