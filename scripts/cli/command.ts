import type { PaycollectAdmin } from '../../clients/admin/index.ts';
import type { PaycollectMerchant } from '../../clients/merchant/index.ts';
import type { Options, Values } from './args.ts';

export interface Ctx {
  /** The admin client; created on first use, so option mistakes are reported before a missing token. */
  admin(): PaycollectAdmin;
  /** A merchant-API client for this brand API key (its brand and mode scope what it sees). */
  merchant(apiKey: string): PaycollectMerchant;
}

export interface Result {
  /** What `--json` prints. */
  json: unknown;
  /** What a person reads. */
  text: string;
}

export interface Command {
  summary: string;
  /** The command's own options, as shown in its help. */
  usage: string;
  options: Options;
  /** More help lines (examples, notes). */
  notes?: string[];
  run(ctx: Ctx, v: Values): Promise<Result>;
}

export type Commands = Record<string, Command>;
