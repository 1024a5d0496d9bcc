/**
 * The `master_key_check` row (one at most) and samples of what is sealed under the master key. Read
 * before migrations run, so each query first asks whether its table exists yet: a database from an
 * earlier release has no check table, and an empty one has no tables at all.
 */
import { sql } from 'kysely';
import type { DB } from './database.ts';

async function tableExists(db: DB, table: string): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`select to_regclass(${table}) is not null as found`.execute(db);
  return rows[0]?.found === true;
}

/** The stored key check, or undefined when there is none (or no table for it yet). */
export async function findKeyCheck(db: DB): Promise<string | undefined> {
  if (!(await tableExists(db, 'master_key_check'))) return undefined;
  const { rows } = await sql<{ value: string }>`select value from master_key_check where id = 1`.execute(db);
  return rows[0]?.value;
}

/** Stores `value` unless a check is stored already, then returns the stored one: racing processes agree. */
export async function storeKeyCheck(db: DB, value: string): Promise<string> {
  await sql`insert into master_key_check (id, value) values (1, ${value}) on conflict (id) do nothing`.execute(db);
  const stored = await findKeyCheck(db);
  if (stored === undefined) throw new Error('the master key check was not stored');
  return stored;
}

/** Some values sealed under the master key (the newest signing key, an OTP secret), if the database has any. */
export async function sealedSamples(db: DB): Promise<string[]> {
  const samples: string[] = [];
  if (await tableExists(db, 'signing_keys')) {
    const { rows } = await sql<{ sealed: string }>`select private_key as sealed from signing_keys order by created_at desc limit 1`.execute(db);
    samples.push(...rows.map((row) => row.sealed));
  }
  if (await tableExists(db, 'otp_factors')) {
    const { rows } = await sql<{ sealed: string }>`select secret as sealed from otp_factors limit 1`.execute(db);
    samples.push(...rows.map((row) => row.sealed));
  }
  return samples;
}
