import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { WebhookEventName } from '../../../../contract/vocabulary.ts';
import { listEvents } from '../../../domain/webhooks/events-feed.ts';
import { merchantOf } from '../../context.ts';

const s = initServer();

export const merchantEventHandlers = s.router(contract.merchant.events, {
  list: async ({ req, res, query }) => {
    const { brandId, mode } = merchantOf(req);
    // A long-poll whose caller hung up stops waiting (and polling) at once.
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const { events, nextCursor } = await listEvents(req.db, {
      brandId,
      mode,
      after: query.after === undefined ? null : Number(query.after),
      limit: query.limit,
      waitSeconds: query.wait,
      types: query.types ? [...new Set(query.types.split(','))] as WebhookEventName[] : null,
      signal: gone.signal,
    });
    return {
      status: 200,
      body: {
        success: true,
        data: events.map((e) => ({ id: e.id, event: e.event, created_at: e.createdAt.toISOString(), livemode: e.mode === 'live', test: e.test, payload: e.payload })),
        meta: { next_cursor: nextCursor },
      },
    };
  },
});
