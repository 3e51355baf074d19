import { Migration } from '@mikro-orm/migrations';

/**
 * An index for what a wallet account is read by: its transactions started today (the
 * checkout reads every candidate account's use on each first offer) and whether any was
 * paid into it (delete). Without it both scanned every transaction.
 */
export class Migration0045WalletAccountIndex extends Migration {
  override name = '0045-wallet-account-index';

  override up(): void {
    this.addSql(`create index "transactions_wallet_account_idx" on "transactions" ("wallet_account_id", "created_at") where wallet_account_id IS NOT NULL;`);
  }

  override down(): void {
    this.addSql(`drop index "transactions_wallet_account_idx";`);
  }
}
