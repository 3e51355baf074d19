import { PassThrough } from 'node:stream';
import { initServer } from '@ts-rest/express';
import { AppError } from '../../../../contract/common/errors.ts';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import type { MatchSubmittedTransaction } from '../../../domain/checkout/manual-submission-seam.ts';
import { startCheckoutTransaction } from '../../../domain/checkout/pay.ts';
import { replaceCheckoutSubmission } from '../../../domain/checkout/replace.ts';
import { cancelCheckout, loadCheckout, type CheckoutLinks } from '../../../domain/checkout/view.ts';
import { followCheckoutStatus, streamSlots, type StatusFollower } from '../../../domain/checkout/status-stream.ts';
import { clientAddressBucket } from '../../rate-limit.ts';

const s = initServer();

/** How long EventSource waits before reconnecting after a dropped stream. */
const STREAM_RETRY_MS = 3000;

function checkoutLinks(deps: AppDeps): CheckoutLinks {
  return { publicBaseUrl: deps.config.PUBLIC_BASE_URL, sandboxSecret: deps.secrets.sandboxCallbackSecret };
}

/** `matchSubmittedTransaction`: the SMS matching implementation, once it exists (see manual-submission-seam.ts). */
export function checkoutPaymentHandlers(deps: AppDeps, matchSubmittedTransaction?: MatchSubmittedTransaction) {
  const links = checkoutLinks(deps);
  // Per client address (an IPv6 /64, as the rate limits count), in this process.
  const slots = streamSlots(deps.config.CHECKOUT_STREAMS_PER_ADDRESS);
  return s.router(contract.checkout.payments, {
    get: async ({ req, params }) => {
      const { view } = await loadCheckout(req.db, params.payment_id, links);
      return { status: 200, body: { success: true, data: view } };
    },
    startTransaction: async ({ req, params, body }) => {
      const transaction = await startCheckoutTransaction(
        req.db,
        { keys: deps.crypto, links, logger: deps.logger, matchSubmittedTransaction },
        params.payment_id,
        { gateway: body.gateway, method: body.method, gatewayTrxId: body.gateway_trx_id, senderNumber: body.sender_number },
      );
      return { status: 201, body: { success: true, data: transaction } };
    },
    replaceSubmission: async ({ req, params, body }) => {
      const transaction = await replaceCheckoutSubmission(
        req.db,
        { keys: deps.crypto, links, logger: deps.logger, matchSubmittedTransaction },
        params.payment_id,
        { gatewayTrxId: body.gateway_trx_id, senderNumber: body.sender_number, requestId: req.requestId },
      );
      return { status: 200, body: { success: true, data: transaction } };
    },
    statusStream: async ({ req, res, params }) => {
      // Shutting down: the streams are being ended; a new one would hold the server open.
      if (deps.state.shuttingDown) throw new AppError('SERVICE_UNAVAILABLE');
      const release = slots.take(clientAddressBucket(req.ip));
      if (!release) throw new AppError('RATE_LIMITED', 'Too many status streams from this address; poll the payment instead');
      const body = new PassThrough();
      // Until the first status is written the client knows nothing: `retry` tells EventSource how soon to come back after a drop.
      body.write(`retry: ${STREAM_RETRY_MS}\n\n`);
      let heartbeat: NodeJS.Timeout | undefined;
      let follower: StatusFollower;
      try {
        follower = await followCheckoutStatus(
          { db: deps.db, hub: deps.notifications, links, logger: deps.logger },
          params.payment_id,
          {
            status: (event) => body.write(`event: status\ndata: ${JSON.stringify(event)}\n\n`),
            end: () => {
              clearInterval(heartbeat);
              body.end();
            },
          },
        );
      } catch (err) {
        release();
        throw err;
      }
      if (!body.writableEnded) {
        heartbeat = setInterval(() => body.write(': heartbeat\n\n'), deps.config.CHECKOUT_STREAM_HEARTBEAT_MS);
        heartbeat.unref();
      }
      // The client went away (or the response ended): free the subscription and the timer.
      const done = () => {
        clearInterval(heartbeat);
        follower.stop();
        body.end();
        release();
      };
      if (res.destroyed) done();
      else res.once('close', done);
      res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
      // A buffering proxy (nginx) would hold the events back.
      res.setHeader('X-Accel-Buffering', 'no');
      // ts-rest's Express adapter pipes a Stream body as it is; its types know only the contract's (string) body.
      return { status: 200, body: body as unknown as string };
    },
    cancel: async ({ req, params }) => {
      const { cancelUrl } = await cancelCheckout(req.db, params.payment_id, links);
      return { status: 200, body: { success: true, data: { cancel_url: cancelUrl } } };
    },
  });
}
