import { describe, expectTypeOf, it } from 'vitest';
import type { PaycollectMerchant, Payment, PaymentIntent, PaymentListItem, PaymentTransaction } from '../../clients/merchant/index.ts';
import type { PaycollectDevice, PairDetails } from '../../clients/device/index.ts';
import type { Page } from '../../clients/shared/pagination.ts';
import type { testClient } from '../support/sdk-flaky-server.ts';

/*
 * Compile-time checks (run by `tsc`, the vitest bodies are empty at run time):
 * the method types derived from a contract must be exact, never `any`.
 */
type T = ReturnType<typeof testClient>;
type Thing = { id: number; name: string };

describe('types derived from a contract', () => {
  it('path params first, then body or query, then options', () => {
    expectTypeOf<T['get']>().parameters.toEqualTypeOf<[id: string | number, options?: import('../../clients/shared/http.ts').RequestOptions]>();
    expectTypeOf<T['get']>().returns.resolves.toEqualTypeOf<Thing>();
    expectTypeOf<T['create']>().parameter(0).toEqualTypeOf<{ name: string }>();
    expectTypeOf<T['create']>().returns.resolves.toEqualTypeOf<Thing>();
    expectTypeOf<T['fire']>().returns.resolves.toEqualTypeOf<{ fired: boolean }>();
    expectTypeOf<T['ping']>().returns.resolves.toEqualTypeOf<void>();
  });

  it('lists return pages and iterate', () => {
    expectTypeOf<T['list']>().returns.resolves.toEqualTypeOf<Page<Thing, { page: number; per_page: number; total: number; total_pages: number }>>();
    expectTypeOf<T['list']['items']>().returns.toEqualTypeOf<AsyncIterable<Thing>>();
    // Query values: the URL strings or the numbers they stand for; enums stay enums.
    expectTypeOf<Parameters<T['list']>[0]>().toEqualTypeOf<
      { page?: string | number | undefined; per_page?: string | number | undefined; colour?: 'red' | 'blue' | undefined } | undefined
    >();
  });

  it('misuse does not compile', () => {
    const check = (c: T) => {
      // @ts-expect-error the path param is required
      void c.get();
      // @ts-expect-error body fields are required
      void c.create({});
      // @ts-expect-error unknown body fields are refused
      void c.create({ name: 'n', colour: 'red' });
      // @ts-expect-error enum query values are checked
      void c.list({ colour: 'green' });
      // @ts-expect-error only lists paginate
      void c.get.pages;
    };
    void check;
  });

  it('the merchant SDK has the contract’s namespaces plus webhooks.constructEvent', () => {
    expectTypeOf<Awaited<ReturnType<PaycollectMerchant['brand']['get']>>['id']>().toEqualTypeOf<number>();
    expectTypeOf<PaycollectMerchant['webhooks']['constructEvent']>().toBeFunction();
  });

  it('a payment is one of two forms, told apart by `object`', () => {
    type Retrieved = Awaited<ReturnType<PaycollectMerchant['payments']['retrieve']>>;
    expectTypeOf<Extract<Retrieved, { object: 'payment_intent' }>['transaction_id']>().toEqualTypeOf<null>();
    expectTypeOf<Extract<Retrieved, { object: 'transaction' }>['transaction_id']>().toEqualTypeOf<number>();
    expectTypeOf<Payment>().toEqualTypeOf<PaymentTransaction | PaymentIntent>();
    expectTypeOf<Payment['object']>().toEqualTypeOf<'transaction' | 'payment_intent'>();
    expectTypeOf<PaymentTransaction['transaction_id']>().toEqualTypeOf<number>();
    expectTypeOf<PaymentIntent['transaction_id']>().toEqualTypeOf<null>();
    expectTypeOf<PaymentIntent['trx_id']>().toEqualTypeOf<null>();
    expectTypeOf<PaymentIntent['status']>().toEqualTypeOf<'pending' | 'expired' | 'canceled'>();
    expectTypeOf<Extract<PaymentListItem, { object: 'transaction' }>['transaction_id']>().toEqualTypeOf<number>();
    const narrow = (p: Payment): number | null => (p.object === 'transaction' ? p.transaction_id : p.transaction_id);
    expectTypeOf(narrow).returns.toEqualTypeOf<number | null>();
    // @ts-expect-error: an intent has no transaction, so its transaction_id is not a number
    const wrong: number = ({} as PaymentIntent).transaction_id;
    void wrong;
  });

  it('the device SDK derives pair() from the pairing route', () => {
    expectTypeOf<PairDetails>().not.toHaveProperty('fingerprint');
    expectTypeOf<PaycollectDevice['pair']>().parameter(0).toEqualTypeOf<string>();
    expectTypeOf<PaycollectDevice['refresh']>().returns.resolves.toEqualTypeOf<{ accessToken: string; refreshToken: string }>();
  });
});
