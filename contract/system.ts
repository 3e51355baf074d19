import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { errorEnvelopeFor, meta, probeSurfaceCodes, timestampSchema, withErrorResponses } from './common/index.ts';

const c = initContract();

const checkSchema = z.object({
  status: z.enum(['ok', 'error']),
  latency_ms: z.number().nullable().describe('Round trip of the check, or null when it failed.'),
  error: z.string().nullable().describe('Why the check failed, or null.'),
});

export const readinessSchema = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    role: z.enum(['all', 'api', 'worker']).describe('What this process runs (SERVICE_ROLE): `all`, `api` (HTTP only) or `worker` (jobs and sweeps only).'),
    checks: z.object({
      database: checkSchema,
      jobs: checkSchema.optional().describe('The job queue, checked where jobs are worked (roles `all` and `worker`); absent in the `api` role, which only enqueues, in its own transactions.'),
      read_replica: checkSchema
        .nullable()
        .describe('The read replica (DATABASE_READ_URL), or null when none is configured. Its failure does not make the service unready: lag-tolerant reads then go to the primary.'),
    }),
    server_time: timestampSchema,
  })
  .meta({ id: 'Readiness' });

/** Liveness and readiness probes for orchestrators and load balancers. */
export const systemContract = withErrorResponses(
  c.router(
    {
      health: {
        method: 'GET',
        path: '/healthz',
        summary: 'Liveness probe',
        description: 'Answers 200 while the process is up and serving HTTP. Checks nothing else.',
        responses: {
          200: z.object({ success: z.literal(true), data: z.object({ status: z.literal('ok'), server_time: timestampSchema }) }),
        },
        metadata: meta({ auth: 'none', tag: 'System' }),
      },
      ready: {
        method: 'GET',
        path: '/readyz',
        summary: 'Readiness probe',
        description: 'Checks what this process\'s role needs: the database, and the job queue where jobs are worked; and the read replica if one is configured (reported only: its reads then go to the primary). 200 when the database and the job queue answer, otherwise 503 with the same body shape so a person can see which check failed. A `worker` process answers this on its own small listener (README, Running API and worker processes separately).',
        responses: {
          200: z.object({ success: z.literal(true), data: readinessSchema }),
          503: z.union([z.object({ success: z.literal(true), data: readinessSchema }), errorEnvelopeFor(['SERVICE_UNAVAILABLE'])]),
        },
        metadata: meta({ auth: 'none', tag: 'System' }),
      },
    },
    { strictStatusCodes: true },
  ),
  probeSurfaceCodes,
);
