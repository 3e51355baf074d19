import { describe, expect, it } from 'vitest';
import { successRedirectUrl } from '../../server/domain/payments/redirect.ts';

const ID = '3f0c2a4e-9b1d-4c5e-8f7a-1b2c3d4e5f60';

describe('successRedirectUrl: the success URL carries the payment id', () => {
  it.each([
    ['https://shop.example/thanks', `https://shop.example/thanks?payment_id=${ID}`],
    ['https://shop.example/thanks?order=7', `https://shop.example/thanks?order=7&payment_id=${ID}`],
    ['https://shop.example/thanks?order=7#done', `https://shop.example/thanks?order=7&payment_id=${ID}#done`],
    // An existing payment_id parameter is replaced, never duplicated.
    ['https://shop.example/thanks?payment_id=old&x=1', `https://shop.example/thanks?x=1&payment_id=${ID}`],
    ['https://shop.example/thanks?x=1&payment_id=old', `https://shop.example/thanks?x=1&payment_id=${ID}`],
    // The merchant's other parameters keep their exact encoding.
    ['https://shop.example/ok?a=1&b=%222%22&c=x+y', `https://shop.example/ok?a=1&b=%222%22&c=x+y&payment_id=${ID}`],
    ['https://shop.example/orders/{PAYMENT_ID}?again={PAYMENT_ID}', `https://shop.example/orders/${ID}?again=${ID}`],
    // Braces escaped by the merchant's URL library still count as the placeholder.
    ['https://shop.example/thanks?pid=%7BPAYMENT_ID%7D', `https://shop.example/thanks?pid=${ID}`],
  ])('%s', (url, expected) => {
    expect(successRedirectUrl(url, ID)).toBe(expected);
  });
});
