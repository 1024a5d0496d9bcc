/**
 * A user's row lock for the rest of the caller's transaction: changes of one user's credentials
 * (a reset code checked and then used, a factor added) happen one after another, never interleaved.
 */
import type { DB } from '../../store/database.ts';
import { takeUserRowLock } from '../../store/users.ts';

export function holdUser(trx: DB, userId: string): Promise<void> {
  return takeUserRowLock(trx, userId);
}
