/**
 * Whose addresses an administrator's word may count for. An instance-wide administrator's, for any;
 * an organization's administrator's, only for an address no user outside its organizations has
 * (verified or not). Otherwise an owner could make another organization's clients see
 * `email_verified: true` for an impostor of one of their users, by vouching for the address
 * (`isVerified`) or by having the address's code returned to it (`returnCode`) and verifying it.
 */
import type { DB } from '../../store/database.ts';
import { emailHeldOutside } from '../../store/users.ts';

/** Who vouches for an address: an instance-wide administrator, or an administrator of these organizations. */
export type Voucher = 'instance' | { orgIds: readonly string[] };

/** Whether `voucher`'s word may not count for `address` of user `userId`. */
export function addressBeyond(db: DB, user: { id: string; instanceId: string }, address: string, voucher: Voucher): Promise<boolean> {
  if (voucher === 'instance') return Promise.resolve(false);
  return emailHeldOutside(db, user.instanceId, address, voucher.orgIds, user.id);
}
