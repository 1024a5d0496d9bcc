/**
 * How many self-registrations succeed: 5 an hour per client address, and a budget an hour for the
 * whole instance (GATEHOUSE_REGISTRATIONS_PER_HOUR). Each account costs an argon2 hash and may have
 * code mails sent, so an address's sixth registration of the hour is refused before any work.
 *
 * Counted from the database (the `registrations` table), unlike the per-process failure throttle:
 * registrations are rare, so a count costs nothing on a hot path, and a limit of 5 an hour must hold
 * across every process on the database and across restarts, or it would be 5 × processes and start
 * again at every deployment. The limit key is the one of the other per-address limits (an IPv4
 * address, an IPv6 /64). Rows are kept for the hour the limits look at, then deleted.
 */
import type { DB } from '../../store/database.ts';
import { lockRegistrations, secondsLeftInRegistrationWindow, type RegistrationCount } from '../../store/registrations.ts';

export const REGISTRATIONS_PER_ADDRESS = 5;
export const REGISTRATION_WINDOW_SECONDS = 3600;

export interface RegistrationLimits {
  instanceId: string;
  /** The client address's limit key (http/client-address.ts `limitKeyOf`). */
  address: string;
  /** The instance's budget an hour; 0: none. */
  perHour: number;
}

/**
 * Whether a new registration would exceed a limit, and if so in how many seconds a slot frees up.
 * Pass the transaction that will record the registration after `lockRegistrationLimits`, or the
 * database for a look before the work (which a concurrent registration may still overtake).
 */
export async function registrationLimitReached(db: DB, limits: RegistrationLimits): Promise<{ retryAfterSeconds: number } | undefined> {
  const counts: Array<[RegistrationCount, number]> = [[{ instanceId: limits.instanceId, address: limits.address }, REGISTRATIONS_PER_ADDRESS]];
  if (limits.perHour > 0) counts.push([{ instanceId: limits.instanceId }, limits.perHour]);
  for (const [which, limit] of counts) {
    const left = await secondsLeftInRegistrationWindow(db, which, limit, REGISTRATION_WINDOW_SECONDS);
    if (left.length >= limit) return { retryAfterSeconds: Math.max(1, left[left.length - 1]!) };
  }
  return undefined;
}

/** Holds the instance's registrations until the transaction ends, so that the counts stay true. */
export function lockRegistrationLimits(trx: DB, instanceId: string): Promise<void> {
  return lockRegistrations(trx, instanceId);
}
