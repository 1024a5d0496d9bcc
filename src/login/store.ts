/**
 * The login UI's queries: finding a human user by login name, what the login name step remembers in
 * the authorization request, the brute-force counters, and registration's insert.
 */
import { sql } from 'kysely';
import type { DB } from '../store/database.ts';
import type { UserState } from '../store/schema.ts';

/**
 * The human user a login name names (SPEC §5, §7): `userName@primaryDomain`, or `userName` alone
 * when exactly one human user of the instance has it. Case-insensitive.
 */
export async function findHumanByLoginName(db: DB, instanceId: string, loginName: string): Promise<string | undefined> {
  const at = loginName.lastIndexOf('@');
  const prefix = at > 0 ? loginName.slice(0, at) : '';
  const domain = at > 0 ? loginName.slice(at + 1) : '';
  const rows = await db
    .selectFrom('users')
    .innerJoin('orgs', 'orgs.id', 'users.org_id')
    .select(['users.id', sql<boolean>`lower(users.user_name) = lower(${prefix}) and lower(orgs.primary_domain) = lower(${domain})`.as('full')])
    .where('users.instance_id', '=', instanceId)
    .where('users.kind', '=', 'human')
    .where((eb) =>
      eb.or([
        eb(sql`lower(users.user_name)`, '=', sql`lower(${loginName})`),
        eb.and([eb(sql`lower(users.user_name)`, '=', sql`lower(${prefix})`), eb(sql`lower(orgs.primary_domain)`, '=', sql`lower(${domain})`)]),
      ]),
    )
    .orderBy('full', 'desc')
    .limit(2)
    .execute();
  const [first, second] = rows;
  if (first?.full) return first.id;
  return first && !second ? first.id : undefined;
}

/** The login name step's result: the name as typed and the user it names (null when none). */
export async function rememberLoginName(db: DB, requestId: string, loginName: string, userId: string | null): Promise<void> {
  await db.updateTable('auth_requests').set({ login_name: loginName, user_id: userId, session_id: null }).where('id', '=', requestId).execute();
}

export async function rememberedLoginName(db: DB, requestId: string): Promise<string | undefined> {
  const row = await db.selectFrom('auth_requests').select('login_name').where('id', '=', requestId).executeTakeFirst();
  return row?.login_name ?? undefined;
}

export interface PasswordAttempt {
  loginName: string | undefined;
  /** Undefined for an unknown login name. */
  user: { id: string; orgId: string; state: UserState; passwordHash: string | null; lockedUntil: Date | null } | undefined;
}

/** What the password step checks, in one query whether or not the login name named a user. */
export async function passwordAttempt(db: DB, requestId: string): Promise<PasswordAttempt> {
  const row = await db
    .selectFrom('auth_requests as r')
    .leftJoin('users as u', (join) => join.onRef('u.id', '=', 'r.user_id').on('u.kind', '=', 'human'))
    .select(['r.login_name', 'u.id as user_id', 'u.org_id', 'u.state', 'u.password_hash', 'u.locked_until'])
    .where('r.id', '=', requestId)
    .executeTakeFirst();
  const user =
    row?.user_id && row.org_id && row.state
      ? { id: row.user_id, orgId: row.org_id, state: row.state, passwordHash: row.password_hash ?? null, lockedUntil: row.locked_until ?? null }
      : undefined;
  return { loginName: row?.login_name ?? undefined, user };
}

/**
 * Counts a failed password: on the request always, and on the user when there is one, in one
 * statement either way (so an unknown user costs the same write). The user's count restarts when it
 * reaches `threshold`, which locks the user until `lockUntil`. Returns the user's lock, if any.
 */
export async function countFailedPassword(
  db: DB,
  input: { requestId: string; userId: string | undefined; threshold: number; lockUntil: Date },
): Promise<Date | null> {
  const reached = sql<boolean>`failed_attempts + 1 >= ${input.threshold}`;
  const row = await db
    .with('failed', (qb) =>
      qb
        .updateTable('users')
        .set({
          failed_attempts: sql<number>`case when ${reached} then 0 else failed_attempts + 1 end`,
          locked_until: sql<Date | null>`case when ${reached} then ${input.lockUntil}::timestamptz else locked_until end`,
        })
        .where('id', '=', input.userId ?? '')
        .returning('locked_until'),
    )
    .updateTable('auth_requests')
    .set((eb) => ({ failed_passwords: eb('failed_passwords', '+', 1) }))
    .where('id', '=', input.requestId)
    .returning((eb) => eb.selectFrom('failed').select('failed.locked_until').as('locked_until'))
    .executeTakeFirst();
  return row?.locked_until ?? null;
}

/** The user's lock (`locked_until`), as committed now. */
export async function userLock(db: DB, userId: string): Promise<Date | null> {
  const row = await db.selectFrom('users').select('locked_until').where('id', '=', userId).executeTakeFirst();
  return row?.locked_until ?? null;
}

/** A completed sign-in ends the run of failures (and an expired lock). SPEC 10.3: only that. */
export async function clearFailedPasswords(db: DB, userId: string): Promise<void> {
  await db
    .updateTable('users')
    .set({ failed_attempts: 0, locked_until: null })
    .where('id', '=', userId)
    .where((eb) => eb.or([eb('failed_attempts', '<>', 0), eb('locked_until', 'is not', null)]))
    .execute();
}

/**
 * Where self-registration creates users: the instance's default organization, and whether that
 * organization allows it (SPEC 10.12: `allowRegister`, unset meaning true for the default org).
 */
export async function registrationTarget(db: DB, instanceId: string): Promise<{ orgId: string; allowed: boolean } | undefined> {
  const row = await db
    .selectFrom('instances')
    .innerJoin('orgs', 'orgs.id', 'instances.default_org_id')
    .select(['orgs.id', 'orgs.allow_register'])
    .where('instances.id', '=', instanceId)
    .executeTakeFirst();
  return row ? { orgId: row.id, allowed: row.allow_register ?? true } : undefined;
}

/**
 * Whether any user (human or machine) of the instance has that name, case-insensitively. SPEC 10.12:
 * self-registration refuses it, so that a newcomer cannot make another organization's user's short
 * login name ambiguous.
 */
export async function userNameTaken(db: DB, instanceId: string, userName: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('instance_id', '=', instanceId)
    .where(sql`lower(user_name)`, '=', sql`lower(${userName})`)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** PostgreSQL's unique_violation: a concurrent registration took the name first. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}
