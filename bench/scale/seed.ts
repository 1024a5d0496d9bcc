/**
 * Grows a Gatehouse database to a given number of users and stored tokens, fast: set-based
 * `insert … select … from generate_series(…)` statements of at most `batchSize` rows each, never
 * through the API and never an argon2 hash per row, then `vacuum (analyze)`. A small growth runs one
 * transaction per batch; a bulk one (`rebuildIndexes`) runs its batches in one transaction that drops
 * the tables' indexes first and builds them again at the end (10M tokens: about 2.5 min instead of
 * 10). The rows have the shapes Gatehouse's own statements write:
 *
 * - organizations as domain/instance/org-admin.ts `addOrg` stores them, with their `org.added`;
 * - users as domain/users/user-admin.ts `storeNewHuman` / `storeNewMachine` store them: the row, the
 *   user id (and a machine's user name, its client id) claimed in `identifiers`, one
 *   `user.human.added` / `user.machine.added` event with that payload; a few organization owners in
 *   `user_roles` (and `roles` in their event, as the bootstrap file writes it); when asked, half of
 *   the humans authorized for a project, as domain/projects/authorization-admin.ts stores it;
 * - browser sessions as domain/sign-in/sessions.ts records them, one per sign-in;
 * - opaque access tokens and refresh tokens as domain/tokens/tokens.ts and refresh-tokens.ts store
 *   them: `id` (the jti) in kernel/ids.ts's shape (milliseconds since 2020 shifted left by 22 bits,
 *   plus 22 low bits), `token_hash` the hex SHA-256 of the token string, which is 43 base64url
 *   characters (32 bytes) like kernel/ids.ts `randomToken(32)`. The plaintext of token n is
 *   base64url(sha256(`${seed}:${n}`)), computed in SQL and here alike (`seededTokenPlaintext`), so
 *   that a benchmark can present tokens it seeded.
 *
 * Everything is a function of n (the user's or the token's index) and of the moment of each growth
 * call (`now`, which token times are relative to), so that the same calls give the same database
 * apart from those times. Growing again continues from the current size (found by probing for the
 * seeded rows by id and by token hash): 0 → 100k → 1M in one run.
 *
 * The layout (see `seededUser`, `seededTokenShape`):
 *
 * - user n is `user<n>`; every tenth user (n % 10 = 9) is a machine user, the others humans with a
 *   generated given and family name (syllables: about 16k given and 32k family names, so that a
 *   `contains` search of a name is selective), `user<n>@org<k>.scale.test` as email (unverified for
 *   a quarter of them) and no password (or `passwordHash` for every human, when given);
 * - even n are in one big organization (k = 0, `org0.scale.test`), odd n in organizations of 10,000
 *   users each (k = 1 + ⌊n / 20000⌋); the login name is the same as the email address;
 * - users were created one every 3 s from 2025-01-01, so every seeded token is younger than its user;
 * - tokens come in groups of ten (a "decade" d = ⌊n / 10⌋, c = n % 10), each group one sign-in of one
 *   human user and the tokens of one machine user: c = 0…4 are the human's opaque access tokens
 *   (scopes `humanScopes`, one of `clients`), c = 5…7 its refresh tokens (families of c = 0…2), c = 8,9
 *   the machine's client_credentials access tokens (client id = its user name). In one decade of five
 *   (d % 5 = 0) the access tokens expired 20 min to 10 h before `now`; the other access tokens live
 *   for at least 6 h after `now`; refresh tokens live for 30 days. So 40% of the tokens are live
 *   human access tokens (all with `openid`), 10% expired ones, 30% refresh tokens, 16% live and 4%
 *   expired machine tokens. Nothing is expired long enough (a day) for the server's prune to delete.
 * - the user of a decade is chosen by a hash of d among the users there are when the token is seeded.
 *
 * Limits: up to 2^25 (33M) tokens, and about 10M users (their creation times must be past). No
 * process-level state: everything goes through the `client` given, whose session settings are
 * changed only with `set local` inside its transactions. The statements fire the tables' triggers
 * (the users' counters of organizations) and check their foreign keys, as any insert does.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';

/** What the seeder needs of a connection: one session, for its transactions. */
export type SeedClient = Pick<pg.ClientBase, 'query'>;

export interface SeedTarget {
  users: number;
  tokens: number;
}

/** An application whose users' tokens are seeded: its client id and the audience of its tokens. */
export interface SeedClientApp {
  clientId: string;
  audience: readonly string[];
}

export interface SeedOptions {
  /** The instance the rows belong to; the only one of `instances` when left out. */
  instanceId?: string;
  /** What token plaintexts are made from; default `gatehouse-scale`. */
  seed?: string;
  /** Rows per statement (and per transaction); default 100,000. */
  batchSize?: number;
  /** The applications of the human users' tokens (token n uses clients[d % length]); default two made-up ones. */
  clients?: readonly SeedClientApp[];
  /** Scopes of the human users' access and refresh tokens; default `openid profile email offline_access`. */
  humanScopes?: readonly string[];
  /** Scopes of the machine users' tokens; default `openid`. */
  machineScopes?: readonly string[];
  /** Audience of the machine users' tokens besides their own client id (project ids); default none. */
  machineAudience?: readonly string[];
  /** One real password hash for every seeded human (hash it once); default none (`password_hash` null, passkey sign-ins in `amr`). */
  passwordHash?: string | null;
  /** Access token lifetime, seconds (GATEHOUSE_ACCESS_TOKEN_SECONDS); default 12 h. */
  accessTokenSeconds?: number;
  /** Refresh token idle and absolute lifetimes, seconds; default 30 and 90 days. */
  refreshIdleSeconds?: number;
  refreshAbsoluteSeconds?: number;
  /** The moment the new tokens' times are relative to; default now. */
  now?: Date;
  /** `vacuum (analyze)` the grown tables at the end (else only `analyze`); default true. */
  vacuum?: boolean;
  /**
   * Drop the grown tables' indexes (those no foreign key needs) for the load and build them again at
   * its end, in one transaction; default: when a growth adds at least 250,000 rows and at least as
   * many as there are.
   */
  rebuildIndexes?: boolean;
  /**
   * Authorize half of the human users (n % 10 < 5) for this project, in its organization, with no
   * roles, as AddAuthorization stores it (the row and its `authorization.added`); default none.
   */
  authorizations?: { projectId: string; orgId: string };
  /** The events' creator; default `scale-seed`. */
  creator?: string;
  /** Progress lines. */
  log?: (line: string) => void;
}

export interface GrowthReport {
  from: SeedTarget;
  to: SeedTarget;
  /** Seconds spent on users (orgs, users, identifiers, events, roles), on tokens (and sessions), on vacuum/analyze. */
  usersSeconds: number;
  tokensSeconds: number;
  analyzeSeconds: number;
}

// ---- the layout, shared by SQL and TypeScript ----

/** kernel/ids.ts: ids count milliseconds from 2020-01-01. */
const ID_EPOCH = 1577836800000n;
const LOW_BITS = 22n;
const LOW_MASK = (1n << LOW_BITS) - 1n;
/**
 * Id keys: seeded tokens are n (below 2^25), the expired tokens of `seedExpiredTokens` 2^25 + i,
 * sessions 2^26 + d, grants (refresh families) 2^26 + 2^24 + f, authorizations 2^26 + 2^25 + n: ids
 * of one kind never equal one of another (revocations hold token, grant and session ids alike).
 */
const MAX_INDEX = 2 ** 25;
const EXPIRED_KEY_BASE = 2 ** 25;
const SESSION_KEY_BASE = 2 ** 26;
const GRANT_KEY_BASE = 2 ** 26 + 2 ** 24;
/** Authorizations: 2^26 + 2^25 + n. */
const AUTHORIZATION_KEY_BASE = 2 ** 26 + 2 ** 25;
const ORG_BASE_MS = Date.UTC(2024, 11, 1);
const ORG_STEP_MS = 60_000;
const USER_BASE_MS = Date.UTC(2025, 0, 1);
const USER_STEP_MS = 3_000;
/** Odd users per small organization, which takes 2 × this many n. */
const USERS_PER_ORG = 10_000;
const HOUR = 3_600_000;
const MINUTE = 60_000;
const DEFAULT_SEED = 'gatehouse-scale';
const DEFAULT_CLIENTS: readonly SeedClientApp[] = [
  { clientId: 'scale-web', audience: ['scale-web'] },
  { clientId: 'scale-mobile', audience: ['scale-mobile'] },
];

/**
 * An id in kernel/ids.ts's shape, unique per key: the time's last 5 bits are replaced by bits 22–26
 * of the key and the low 22 bits are the key's, so two keys below 2^27 never share an id whatever
 * their times (which move by less than 32 ms).
 */
function orderedId(ms: number, key: number): string {
  const adjusted = BigInt(ms - (ms % 32) + (Math.floor(key / 2 ** 22) % 32));
  return (((adjusted - ID_EPOCH) << LOW_BITS) | (BigInt(key) & LOW_MASK)).toString();
}

/** The same in SQL, for bigint expressions `ms` and `key`. */
function orderedIdSql(ms: string, key: string): string {
  return `(((((${ms}) - ((${ms}) % 32) + (((${key}) >> 22) % 32)) - ${ID_EPOCH}) << 22) | ((${key}) & ${LOW_MASK}))::text`;
}

export interface SeededOrg {
  index: number;
  id: string;
  name: string;
  domain: string;
}

export function seededOrg(k: number): SeededOrg {
  return { index: k, id: orderedId(ORG_BASE_MS + k * ORG_STEP_MS, k), name: `Scale org ${k}`, domain: `org${k}.scale.test` };
}

function orgIndexOf(n: number): number {
  return n % 2 === 0 ? 0 : 1 + Math.floor(n / (2 * USERS_PER_ORG));
}

export interface SeededUser {
  n: number;
  id: string;
  kind: 'human' | 'machine';
  userName: string;
  org: SeededOrg;
  /** Humans only. */
  email: string | null;
  /** user name @ the organization's primary domain. */
  loginName: string;
  createdAt: Date;
}

export function seededUser(n: number): SeededUser {
  const org = seededOrg(orgIndexOf(n));
  const kind = n % 10 === 9 ? 'machine' : 'human';
  const userName = `user${n}`;
  const createdMs = USER_BASE_MS + n * USER_STEP_MS;
  return {
    n,
    id: orderedId(createdMs, n),
    kind,
    userName,
    org,
    email: kind === 'human' ? `${userName}@${org.domain}` : null,
    loginName: `${userName}@${org.domain}`,
    createdAt: new Date(createdMs),
  };
}

/** The plaintext of seeded token n: 43 base64url characters, like an opaque token Gatehouse issues. */
export function seededTokenPlaintext(seed: string, n: number): string {
  return createHash('sha256').update(`${seed}:${n}`).digest('base64url');
}

/** What seeded token n is (see the module's comment). */
export interface SeededTokenShape {
  kind: 'access' | 'refresh';
  holder: 'human' | 'machine';
  /** Access tokens: alive for at least 6 h after the growth that seeded it; refresh tokens: 30 days. */
  live: boolean;
}

export function seededTokenShape(n: number): SeededTokenShape {
  const decade = Math.floor(n / 10);
  const c = n % 10;
  const kind = c >= 5 && c <= 7 ? 'refresh' : 'access';
  return { kind, holder: c < 8 ? 'human' : 'machine', live: kind === 'refresh' || decade % 5 !== 0 };
}

function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** token n's hash as Gatehouse computes it (domain/kernel/crypto.ts sha256 of the token string). */
function seededTokenHash(seed: string, n: number): string {
  return sha256Hex(seededTokenPlaintext(seed, n));
}

/** SQL: base64url(sha256(text)) without padding, as Node's digest('base64url'). */
function base64urlSha256Sql(text: string): string {
  return `translate(rtrim(encode(sha256(convert_to(${text}, 'UTF8')), 'base64'), '='), '+/', '-_')`;
}

function hexSha256Sql(text: string): string {
  return `encode(sha256(convert_to(${text}, 'UTF8')), 'hex')`;
}

/** Multiplicative hashes of a bigint expression, 0 ≤ h < 2^32. */
const hashA = (x: string) => `(((${x}) * 2654435761) % 4294967296)`;
const hashB = (x: string) => `(((${x}) * 2246822519 + 374761393) % 4294967296)`;
const hashC = (x: string) => `(((${x}) * 3266489917 + 668265263) % 4294967296)`;

const pick = (values: readonly string[], index: string) => `(array[${values.map((v) => `'${v}'`).join(',')}])[(1 + (${index}) % ${values.length})::int]`;

const GIVEN_1 = ['ka', 'lo', 'mi', 'ne', 'ri', 'sa', 'to', 'vu', 'el', 'an', 'jo', 'ma', 'pe', 'ro', 'li', 'da', 'he', 'ya', 'zo', 'fi', 'gu', 'be', 'cla', 'ste', 'flo', 'ira', 'ol', 'ub', 'ed', 'is', 'or', 'ul'];
const GIVEN_2 = ['ra', 'li', 'na', 'to', 've', 'mi', 'do', 'sa', 'ber', 'lan', 'ric', 'mon', 'tin', 'sel', 'dor', 'vin', 'ka', 'lu', 'ne', 'ro', 'ta', 'gi', 'ph', 'th', 'nd', 'rt', 'ss', 'll', 'mm', 'nn', 'tt', 'rr'];
const GIVEN_3 = ['a', 'o', 'e', 'i', 'an', 'en', 'in', 'on', 'as', 'os', 'us', 'ia', 'ie', 'y', 'el', 'ar'];
const FAMILY_1 = ['schm', 'wag', 'bec', 'hof', 'kra', 'lind', 'berg', 'dub', 'mor', 'gar', 'ross', 'fer', 'tan', 'nak', 'ols', 'pet', 'kow', 'nov', 'hal', 'bran', 'wes', 'ash', 'che', 'dor', 'ev', 'gil', 'har', 'ing', 'jen', 'kel', 'mar', 'quin'];
const FAMILY_2 = ['a', 'e', 'i', 'o', 'u', 'el', 'er', 'an', 'in', 'on', 'ar', 'or', 'ub', 'ist', 'ald', 'eng', 'ow', 'ay', 'ey', 'am', 'im', 'om', 'ut', 'ot', 'et', 'at', 'il', 'ol', 'ur', 'ir', 'ab', 'ek'];
const FAMILY_3 = ['mann', 'ner', 'son', 'sen', 'ski', 'ova', 'ez', 'es', 'ini', 'elli', 'er', 'ton', 'ford', 'well', 'wood', 'stein', 'feld', 'berg', 'dahl', 'lund', 'quist', 'moto', 'yama', 'oglu', 'escu', 'ovic', 'ian', 'ides', 'poulos', 'ak', 'ek', 'ik'];

/** SQL columns of seeded user `n` (a bigint expression): the same values `seededUser` gives. */
function userSql(n: string) {
  const org = `(case when ${n} % 2 = 0 then 0 else 1 + ${n} / ${2 * USERS_PER_ORG} end)`;
  const createdMs = `(${USER_BASE_MS}::bigint + ${n} * ${USER_STEP_MS})`;
  // the high bits of the hashes: the low bits of a multiplicative hash repeat with n's low bits
  const h = `(${hashA(n)} >> 18)`;
  const h2 = `(${hashB(n)} >> 17)`;
  const given = `initcap(${pick(GIVEN_1, h)} || ${pick(GIVEN_2, `${h} / 32`)} || ${pick(GIVEN_3, `${h} / 1024`)})`;
  const family = `initcap(${pick(FAMILY_1, h2)} || ${pick(FAMILY_2, `${h2} / 32`)} || ${pick(FAMILY_3, `${h2} / 1024`)})`;
  return {
    id: orderedIdSql(createdMs, n),
    orgId: orderedIdSql(`(${ORG_BASE_MS}::bigint + ${org} * ${ORG_STEP_MS})`, org),
    machine: `(${n} % 10 = 9)`,
    userName: `('user' || ${n})`,
    email: `('user' || ${n} || '@org' || ${org} || '.scale.test')`,
    given,
    family,
    createdAt: `to_timestamp(${createdMs} / 1000.0)`,
    /** Organization owners: the first user of the big organization and one human in a thousand. */
    owner: `(${n} = 0 or ${n} % 1000 = 1)`,
  };
}

// ---- probing the current size ----

async function exists(client: SeedClient, text: string, value: string): Promise<boolean> {
  return (await client.query(text, [value])).rowCount! > 0;
}

/** The number of seeded rows, found by probing for row n (the rows are a prefix 0…count-1). */
async function prefixLength(has: (n: number) => Promise<boolean>): Promise<number> {
  if (!(await has(0))) return 0;
  let low = 0; // has(low)
  let high = 1;
  while (high < MAX_INDEX && (await has(high))) {
    low = high;
    high *= 2;
  }
  // has(low), !has(high)
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (await has(mid)) low = mid;
    else high = mid;
  }
  return low + 1;
}

/** How many users and tokens the seeder has written into this database so far. */
export async function seededSize(client: SeedClient, options: Pick<SeedOptions, 'seed'> = {}): Promise<SeedTarget> {
  const seed = options.seed ?? DEFAULT_SEED;
  const users = await prefixLength((n) => exists(client, 'select 1 from users where id = $1', seededUser(n).id));
  const tokens = await prefixLength((n) => exists(client, 'select 1 from tokens where token_hash = $1', seededTokenHash(seed, n)));
  return { users, tokens };
}

async function instanceOf(client: SeedClient, options: SeedOptions): Promise<string> {
  if (options.instanceId !== undefined) return options.instanceId;
  const { rows } = await client.query<{ id: string }>('select id from instances');
  if (rows.length !== 1) throw new Error(`the seeder needs exactly one instance (found ${rows.length}); pass instanceId`);
  return rows[0]!.id;
}

async function transaction(client: SeedClient, work: () => Promise<void>): Promise<void> {
  await client.query('begin');
  try {
    // Losing the last batches in a crash is harmless here; waiting for each flush is not.
    await client.query('set local synchronous_commit = off');
    await work();
    await client.query('commit');
  } catch (error) {
    await client.query('rollback');
    throw error;
  }
}

/**
 * The indexes of `tables` that no foreign key needs (every index but a primary key another table
 * references), dropped in the caller's transaction; returns the statements that build them again,
 * as they were (unique and primary key constraints as constraints).
 */
async function dropIndexes(client: SeedClient, tables: readonly string[]): Promise<string[]> {
  const { rows } = await client.query<{ drop: string; create: string }>(
    `select format('alter table %s drop constraint %I', c.conrelid::regclass, c.conname) as drop,
            format('alter table %s add constraint %I %s', c.conrelid::regclass, c.conname, pg_get_constraintdef(c.oid)) as create
     from pg_constraint c
     where c.conrelid = any($1::regclass[]) and c.contype in ('p', 'u', 'x')
       and not exists (select 1 from pg_constraint f where f.contype = 'f' and f.conindid = c.conindid)
     union all
     select format('drop index %s', i.indexrelid::regclass), pg_get_indexdef(i.indexrelid)
     from pg_index i
     where i.indrelid = any($1::regclass[]) and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)`,
    [tables],
  );
  for (const row of rows) await client.query(row.drop);
  return rows.map((row) => row.create);
}

/** Whether a growth adds enough rows that building the indexes again beats updating them row by row. */
function worthRebuilding(options: SeedOptions, existing: number, added: number): boolean {
  return options.rebuildIndexes ?? (added >= 250_000 && added >= existing);
}

/**
 * The batches of one growth: each its own transaction, or (a bulk load) all in one transaction that
 * first drops the tables' indexes and builds them again at the end, which is several times faster
 * than updating a large random-keyed index (a token hash, a trigram index) row by row. Atomic
 * either way per transaction; the tables are locked (access exclusive) while their indexes are gone.
 */
async function loadPhase(
  client: SeedClient,
  rebuild: readonly string[] | undefined,
  log: ((line: string) => void) | undefined,
  body: (batch: (work: () => Promise<void>) => Promise<void>) => Promise<void>,
): Promise<void> {
  if (rebuild === undefined) {
    await body((work) => transaction(client, work));
    return;
  }
  await transaction(client, async () => {
    await client.query(`set local maintenance_work_mem = '1GB'`);
    const rebuilt = await dropIndexes(client, rebuild);
    await body((work) => work());
    const started = performance.now();
    for (const statement of rebuilt) await client.query(statement);
    log?.(`the ${rebuilt.length} indexes of ${rebuild.join(', ')} built again in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  });
}

// ---- growing ----

async function growOrgs(client: SeedClient, instanceId: string, creator: string, users: number): Promise<void> {
  if (users === 0) return;
  const maxOdd = users - 1 - ((users - 1) % 2 === 0 ? 1 : 0);
  const last = maxOdd >= 1 ? orgIndexOf(maxOdd) : 0;
  const id = orderedIdSql(`(${ORG_BASE_MS}::bigint + k * ${ORG_STEP_MS})`, 'k');
  await transaction(client, async () => {
    await client.query(
      `with added as (
         insert into orgs (id, instance_id, name, primary_domain, allow_register, created_at, changed_at)
         select ${id}, $1, 'Scale org ' || k, 'org' || k || '.scale.test', null,
                to_timestamp((${ORG_BASE_MS}::bigint + k * ${ORG_STEP_MS}) / 1000.0), to_timestamp((${ORG_BASE_MS}::bigint + k * ${ORG_STEP_MS}) / 1000.0)
         from generate_series(0::bigint, $2::bigint) as k
         on conflict do nothing
         returning id, name, primary_domain, created_at)
       insert into events (instance_id, aggregate_type, aggregate_id, resource_owner, event_type, creator, payload, created_at)
       select $1, 'org', id, id, 'org.added', $3, jsonb_build_object('name', name, 'domain', primary_domain), created_at from added`,
      [instanceId, last, creator],
    );
  });
}

type Batch = (work: () => Promise<void>) => Promise<void>;

async function growUsers(client: SeedClient, batch: Batch, instanceId: string, options: SeedOptions, from: number, to: number): Promise<void> {
  const u = userSql('n');
  const series = 'from generate_series($2::bigint, $3::bigint - 1) as n';
  const creator = options.creator ?? 'scale-seed';
  const languages = ['en', 'de', 'fr', 'es', 'it'];
  await batch(async () => {
    await client.query(
      `insert into users (id, instance_id, org_id, kind, user_name, state, password_hash, email, email_verified, phone, phone_verified,
         given_name, family_name, nickname, display_name, preferred_language, gender, address, secret_hash, access_token_type, description,
         created_at, changed_at)
       select ${u.id}, $1, ${u.orgId}, case when ${u.machine} then 'machine' else 'human' end, ${u.userName}, 'active',
         case when ${u.machine} then null else $4::text end,
         case when ${u.machine} then null else ${u.email} end, not ${u.machine} and n % 4 <> 0, null, false,
         case when ${u.machine} then null else ${u.given} end,
         case when ${u.machine} then null else ${u.family} end,
         null,
         case when ${u.machine} then 'Service ' || n else ${u.given} || ' ' || ${u.family} end,
         case when ${u.machine} then null else ${pick(languages, 'n / 10')} end,
         null, null, null, 'opaque',
         case when ${u.machine} then 'scale test service ' || n else null end,
         ${u.createdAt}, ${u.createdAt}
       ${series}`,
      [instanceId, from, to, options.passwordHash ?? null],
    );
    // identifiers.ts: the user id, and a machine's user name (its client id)
    await client.query(
      `insert into identifiers (instance_id, key, value, owner_type, owner_id, created_at)
       select $1, lower(v.value), v.value, 'user', ${u.id}, ${u.createdAt}
       ${series}
       cross join lateral (select ${u.id} as value union all select ${u.userName} where ${u.machine}) as v`,
      [instanceId, from, to],
    );
    await client.query(
      `insert into user_roles (user_id, role, scope_org_id)
       select ${u.id}, 'ORG_OWNER', ${u.orgId} from generate_series($1::bigint, $2::bigint - 1) as n where ${u.owner} and not ${u.machine}`,
      [from, to],
    );
    await client.query(
      `insert into events (instance_id, aggregate_type, aggregate_id, resource_owner, event_type, creator, payload, created_at)
       select $1, 'user', ${u.id}, ${u.orgId},
         case when ${u.machine} then 'user.machine.added' else 'user.human.added' end, $4,
         case when ${u.machine}
           then jsonb_build_object('userName', ${u.userName}, 'name', 'Service ' || n, 'roles', '[]'::jsonb, 'keyIds', '[]'::jsonb)
           else jsonb_build_object('userName', ${u.userName}, 'email', ${u.email}, 'phone', null)
                || case when ${u.owner} then '{"roles":["ORG_OWNER"]}'::jsonb else '{}'::jsonb end
         end,
         ${u.createdAt}
       ${series}
       order by n`,
      [instanceId, from, to, creator],
    );
    if (options.authorizations !== undefined) {
      // a second after the user was created (domain/projects/authorization-admin.ts addAuthorization)
      const authorizedMs = `(${USER_BASE_MS}::bigint + n * ${USER_STEP_MS} + 1000)`;
      await client.query(
        `with added as (
           insert into authorizations (id, instance_id, org_id, user_id, project_id, roles, created_at, changed_at)
           select ${orderedIdSql(authorizedMs, `(${AUTHORIZATION_KEY_BASE} + n)`)}, $1, $4, ${u.id}, $5, '{}',
             to_timestamp(${authorizedMs} / 1000.0), to_timestamp(${authorizedMs} / 1000.0)
           ${series}
           where n % 10 < 5
           order by n
           returning id, user_id, created_at)
         insert into events (instance_id, aggregate_type, aggregate_id, resource_owner, event_type, creator, payload, created_at)
         select $1, 'authorization', id, $4, 'authorization.added', $6, jsonb_build_object('userId', user_id, 'projectId', $5::text, 'roles', '[]'::jsonb), created_at
         from added order by created_at`,
        [instanceId, from, to, options.authorizations.orgId, options.authorizations.projectId, creator],
      );
    }
  });
}

interface TokenContext {
  instanceId: string;
  seed: string;
  /** Epoch ms the new tokens' times are relative to. */
  anchorMs: number;
  /** Users there are (seeded), of which the tokens' holders are chosen. */
  users: number;
  clients: readonly SeedClientApp[];
  humanScopes: readonly string[];
  machineScopes: readonly string[];
  machineAudience: readonly string[];
  amr: readonly string[];
  accessSeconds: number;
  refreshIdleSeconds: number;
  refreshAbsoluteSeconds: number;
}

/** The computed columns of seeded token n, as a FROM clause over generate_series($from, $to). */
function tokenRowsSql(groups: number): string {
  const n = 'n';
  const userId = (u: string) => orderedIdSql(`(${USER_BASE_MS}::bigint + ${u} * ${USER_STEP_MS})`, u);
  return `generate_series($2::bigint, $3::bigint - 1) as n
    cross join lateral (select ${n} / 10 as d, ${n} % 10 as c) a
    cross join lateral (select
        a.d % 5 <> 0 as live,
        a.c < 8 as human,
        a.c between 5 and 7 as refresh,
        a.d * 3 + (a.c % 5) % 3 as family,
        (${hashA('a.d')} * ${groups}) >> 32 as grp,
        ${hashB('a.d')} as hd,
        ${hashC(n)} as hn) b
    cross join lateral (select
        case when b.human then 10 * b.grp + a.d % 9 else 10 * b.grp + 9 end as u,
        -- one sign-in per decade: 1–6 h ago in live decades, 13–22 h ago in expired ones
        $4::bigint - case when b.live then ${HOUR} + b.hd % ${5 * HOUR} else ${13 * HOUR} + b.hd % ${9 * HOUR} end as signin_ms) s
    cross join lateral (select case
        when b.refresh then s.signin_ms + (a.c - 5) * ${10 * MINUTE} + 500
        when b.human then s.signin_ms + a.c * ${10 * MINUTE} + 400
        when b.live then $4::bigint - (${MINUTE} + b.hn % ${6 * HOUR - MINUTE})
        else $4::bigint - (${12 * HOUR + MINUTE} + b.hn % ${10 * HOUR})
      end as raw_ms) r
    cross join lateral (select r.raw_ms - r.raw_ms % 32 + (${n} >> 22) % 32 as ms) t
    cross join lateral (select ${userId('s.u')} as user_id) w`;
}

async function growTokens(client: SeedClient, batch: Batch, ctx: TokenContext, from: number, to: number): Promise<void> {
  const groups = Math.floor(ctx.users / 10);
  const rows = tokenRowsSql(groups);
  const sessionId = orderedIdSql('s.signin_ms', `(${SESSION_KEY_BASE} + a.d)`);
  const params = [
    ctx.instanceId, from, to, ctx.anchorMs, ctx.seed,
    ctx.clients.map((c) => c.clientId), ctx.clients.map((c) => c.audience.join(' ')),
    [...ctx.humanScopes], [...ctx.machineScopes], [...ctx.machineAudience], [...ctx.amr],
    ctx.accessSeconds, ctx.refreshIdleSeconds, ctx.refreshAbsoluteSeconds,
  ];
  const plaintext = base64urlSha256Sql(`$5 || ':' || n`);
  await batch(async () => {
    // One browser session per sign-in (decade), of its human user.
    await client.query(
      `insert into user_sessions (id, instance_id, browser_hash, user_id, auth_time, amr, created_at, last_used_at, ended_at)
       select ${sessionId}, $1, ${hexSha256Sql(`'browser' || chr(10) || $5 || ':browser:' || a.d`)}, w.user_id,
         to_timestamp(s.signin_ms / 1000.0), $6::text[], to_timestamp(s.signin_ms / 1000.0),
         to_timestamp((s.signin_ms + ${40 * MINUTE}) / 1000.0), null
       from ${rows}
       where a.c = 0`,
      [ctx.instanceId, from, to, ctx.anchorMs, ctx.seed, [...ctx.amr]],
    );
    await client.query(
      `insert into tokens (id, instance_id, kind, token_hash, client_id, subject, scopes, audience, grant_id, session_id, actor, auth_time, amr,
         created_at, expires_at, absolute_expires_at, revoked_at, used_at, exchanged_as, impersonation)
       select ${orderedIdSql('t.ms', 'n')}, $1,
         case when b.refresh then 'refresh' else 'access' end,
         ${hexSha256Sql(plaintext)},
         case when b.human then ($6::text[])[(1 + a.d % cardinality($6::text[]))::int] else 'user' || s.u end,
         w.user_id,
         case when b.human then $8::text[] else $9::text[] end,
         case when b.human then string_to_array(($7::text[])[(1 + a.d % cardinality($6::text[]))::int], ' ')
              else array['user' || s.u] || $10::text[] end,
         case when b.human then ${orderedIdSql('s.signin_ms', `(${GRANT_KEY_BASE} + b.family)`)} end,
         case when b.human then ${sessionId} end,
         null,
         case when b.human then to_timestamp(s.signin_ms / 1000.0) end,
         case when b.human then $11::text[] end,
         -- access tokens are stored with their iat (whole seconds), refresh tokens with the moment
         case when b.refresh then to_timestamp(t.ms / 1000.0) else to_timestamp(t.ms / 1000) end,
         case when b.refresh then to_timestamp(t.ms / 1000.0) + make_interval(secs => $13)
              else to_timestamp(t.ms / 1000) + make_interval(secs => $12) end,
         case when b.refresh then to_timestamp(s.signin_ms / 1000.0) + make_interval(secs => $14) end,
         null, null, null, false
       from ${rows}`,
      params,
    );
  });
}

async function inBatches(from: number, to: number, size: number, what: string, log: ((line: string) => void) | undefined, work: (from: number, to: number) => Promise<void>): Promise<void> {
  const started = performance.now();
  for (let start = from; start < to; start += size) {
    const end = Math.min(to, start + size);
    await work(start, end);
    const seconds = (performance.now() - started) / 1000;
    log?.(`${what}: ${end.toLocaleString('en')} of ${to.toLocaleString('en')} (${((end - from) / seconds).toFixed(0)} rows/s)`);
  }
}

/**
 * Grows the database from its current seeded size to `target` (never shrinks it). The database is
 * migrated and its instance set up (a first start of Gatehouse).
 */
export async function growTo(client: SeedClient, target: SeedTarget, options: SeedOptions = {}): Promise<GrowthReport> {
  for (const [what, value] of Object.entries(target)) {
    if (!Number.isSafeInteger(value) || value < 0 || value >= MAX_INDEX) throw new Error(`target.${what} must be an integer from 0 to ${MAX_INDEX - 1}`);
  }
  const seed = options.seed ?? DEFAULT_SEED;
  const batch = options.batchSize ?? 100_000;
  const log = options.log;
  const instanceId = await instanceOf(client, options);
  const from = await seededSize(client, { seed });
  const to = { users: Math.max(from.users, target.users), tokens: Math.max(from.tokens, target.tokens) };
  if (to.users > 0 && seededUser(to.users - 1).createdAt.getTime() > Date.now()) throw new Error('too many users: their creation times would be in the future');

  let started = performance.now();
  if (to.users > from.users) {
    await growOrgs(client, instanceId, options.creator ?? 'scale-seed', to.users);
    const rebuild = worthRebuilding(options, from.users, to.users - from.users) ? ['users', 'identifiers', 'events', 'authorizations'] : undefined;
    await loadPhase(client, rebuild, log, (run) =>
      inBatches(from.users, to.users, batch, 'users', log, (start, end) => growUsers(client, run, instanceId, options, start, end)),
    );
  }
  const usersSeconds = (performance.now() - started) / 1000;

  started = performance.now();
  if (to.tokens > from.tokens) {
    if (to.users < 10) throw new Error('tokens need at least 10 seeded users (one human and one machine user per group of ten)');
    const ctx: TokenContext = {
      instanceId,
      seed,
      anchorMs: (options.now ?? new Date()).getTime(),
      users: to.users,
      clients: options.clients ?? DEFAULT_CLIENTS,
      humanScopes: options.humanScopes ?? ['openid', 'profile', 'email', 'offline_access'],
      machineScopes: options.machineScopes ?? ['openid'],
      machineAudience: options.machineAudience ?? [],
      amr: options.passwordHash ? ['pwd'] : ['user', 'mfa'],
      accessSeconds: options.accessTokenSeconds ?? 12 * 3600,
      refreshIdleSeconds: options.refreshIdleSeconds ?? 30 * 86400,
      refreshAbsoluteSeconds: options.refreshAbsoluteSeconds ?? 90 * 86400,
    };
    if (ctx.clients.length === 0) throw new Error('clients must name at least one application');
    // Batches end on a group of ten, so that each sign-in's session is written with its first token.
    const rebuild = worthRebuilding(options, from.tokens, to.tokens - from.tokens) ? ['tokens', 'user_sessions'] : undefined;
    await loadPhase(client, rebuild, log, (run) =>
      inBatches(from.tokens, to.tokens, Math.max(10, batch - (batch % 10)), 'tokens', log, (start, end) => growTokens(client, run, ctx, start, end)),
    );
  }
  const tokensSeconds = (performance.now() - started) / 1000;

  started = performance.now();
  const tables = ['orgs', 'users', 'identifiers', 'user_roles', 'authorizations', 'events', 'user_sessions', 'tokens'];
  if (to.users > from.users || to.tokens > from.tokens) {
    await client.query(`${options.vacuum === false ? 'analyze' : 'vacuum (analyze)'} ${tables.join(', ')}`);
  }
  const analyzeSeconds = (performance.now() - started) / 1000;
  return { from, to, usersSeconds, tokensSeconds, analyzeSeconds };
}

/**
 * Adds `count` access tokens of machine users that expired 2 to 3 days before `now`: rows the
 * server's prune deletes (it keeps token rows for a day past their expiry, server/jobs.ts). They
 * are not part of the seeded size (their plaintexts are `${seed}:expired:${i}`). Needs seeded users.
 */
export async function seedExpiredTokens(client: SeedClient, count: number, options: SeedOptions = {}): Promise<number> {
  const seed = options.seed ?? DEFAULT_SEED;
  const instanceId = await instanceOf(client, options);
  const { users } = await seededSize(client, { seed });
  if (users < 10) throw new Error('expired tokens need at least 10 seeded users');
  const groups = Math.floor(users / 10);
  const anchorMs = (options.now ?? new Date()).getTime();
  const batch = options.batchSize ?? 100_000;
  // Appended after those already there, by probing their hashes.
  const done = await prefixLength((i) => exists(client, 'select 1 from tokens where token_hash = $1', sha256Hex(createHash('sha256').update(`${seed}:expired:${i}`).digest('base64url'))));
  const userId = (u: string) => orderedIdSql(`(${USER_BASE_MS}::bigint + ${u} * ${USER_STEP_MS})`, u);
  const started = performance.now();
  await inBatches(done, done + count, batch, 'expired tokens', options.log, (start, end) =>
    transaction(client, async () => {
      await client.query(
        `insert into tokens (id, instance_id, kind, token_hash, client_id, subject, scopes, audience, created_at, expires_at)
         select ${orderedIdSql('t.ms', `(${EXPIRED_KEY_BASE} + i)`)}, $1, 'access', ${hexSha256Sql(base64urlSha256Sql(`$4 || ':expired:' || i`))},
           'user' || m.u, ${userId('m.u')}, $5::text[], array['user' || m.u],
           to_timestamp(t.ms / 1000), to_timestamp(t.ms / 1000) + make_interval(secs => $6)
         from generate_series($2::bigint, $3::bigint - 1) as i
         cross join lateral (select 10 * ((${hashA('i')} * ${groups}) >> 32) + 9 as u,
           -- issued one after another over a day, 3.5 to 2.5 days ago: the id and expiry indexes take them in order
           $7::bigint - ${84 * HOUR} + ((i - $8::bigint) * ${24 * HOUR}) / $9::bigint as raw_ms) m
         cross join lateral (select m.raw_ms - m.raw_ms % 32 + ((${EXPIRED_KEY_BASE} + i) >> 22) % 32 as ms) t`,
        [instanceId, start, end, seed, [...(options.machineScopes ?? ['openid'])], options.accessTokenSeconds ?? 12 * 3600, anchorMs, done, count],
      );
    }),
  );
  options.log?.(`expired tokens: ${count.toLocaleString('en')} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  await client.query('analyze tokens');
  return count;
}
