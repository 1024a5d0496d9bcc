/**
 * `gatehouse pat create --user NAME [--expires RFC3339] [--out FILE]`: a personal access token for a
 * machine user (docs/management-api.md#personal-access-tokens), as AddPersonalAccessToken makes one.
 * The token leaves once, here; only its hash is stored.
 */
import { apiAudienceScope } from '../config/index.ts';
import {
  addPersonalAccessToken,
  LATEST_PAT_EXPIRY,
  newPersonalAccessToken,
  personalAccessTokenScopes,
} from '../domain/tokens/personal-access-tokens.ts';
import type { DB } from '../store/database.ts';
import { findMachineUsersByName } from '../store/users.ts';

/** Without `--expires`, a token lives this long: it always expires, as ZITADEL's v2 API requires. */
export const DEFAULT_PAT_DAYS = 30;

export interface CreatePatOptions {
  userName: string;
  expiresAt: Date;
  serviceName: string;
}

export interface CreatedPat {
  tokenId: string;
  token: string;
  userId: string;
  expiresAt: Date;
}

export class PatError extends Error {
  override name = 'PatError';
}

/** The expiry `--expires` names (RFC 3339), or the default; PatError naming the problem otherwise. */
export function patExpiry(given: string | undefined, now = Date.now()): Date {
  if (given === undefined) return new Date(now + DEFAULT_PAT_DAYS * 86_400_000);
  const rfc3339 = /^\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2}))?$/;
  const at = new Date(given);
  if (!rfc3339.test(given) || Number.isNaN(at.getTime())) throw new PatError(`--expires ${given} is not an RFC 3339 date or time (e.g. 2027-01-31 or 2027-01-31T12:00:00Z)`);
  if (at.getTime() <= now) throw new PatError(`--expires ${given} lies in the past`);
  if (at.getTime() >= LATEST_PAT_EXPIRY) throw new PatError(`--expires ${given} is after the year 9999`);
  return at;
}

export async function createPersonalAccessToken(db: DB, options: CreatePatOptions): Promise<CreatedPat> {
  const token = newPersonalAccessToken();
  const userId = await db.transaction().execute(async (trx) => {
    const users = await findMachineUsersByName(trx, options.userName);
    const [user] = users;
    if (!user) throw new PatError(`no machine user named "${options.userName}"`);
    if (users.length > 1) throw new PatError(`several machine users are named "${options.userName}"`);
    const owner = { instanceId: user.instance_id, orgId: user.org_id, userId: user.id, creator: 'cli' };
    const scopes = personalAccessTokenScopes(apiAudienceScope(options.serviceName));
    await addPersonalAccessToken(trx, owner, { id: token.id, hash: token.hash, expiresAt: options.expiresAt, scopes });
    return user.id;
  });
  return { tokenId: token.id, token: token.token, userId, expiresAt: options.expiresAt };
}
