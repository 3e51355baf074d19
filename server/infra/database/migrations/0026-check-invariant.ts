import { Migration } from '@mikro-orm/migrations';

/**
 * `check_invariant(ok, message)`: true, or an error with `message` when `ok` is
 * not true. For statements sent with their transaction's COMMIT (db.ts
 * `sendWithCommit`): what code used to check in their answers before committing
 * must fail the statement itself, since nothing runs between it and the COMMIT.
 * VOLATILE (the default) so that the planner never folds or skips a call.
 */
export class Migration0026CheckInvariant extends Migration {
  override name = '0026-check-invariant';

  override up(): void {
    this.addSql(`
      CREATE FUNCTION check_invariant(ok boolean, message text) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        IF ok IS NOT TRUE THEN RAISE EXCEPTION '%', message USING ERRCODE = 'internal_error'; END IF;
        RETURN true;
      END $$`);
  }

  override down(): void {
    this.addSql('DROP FUNCTION IF EXISTS check_invariant(boolean, text)');
  }
}
