/**
 * The `personal_access_tokens` table: machine users' long-lived bearer tokens, by the SHA-256 of the
 * token (docs/management-api.md#personal-access-tokens). Listing with filters and paging is shared
 * with machine keys (store/credentials.ts `listMachineCredentialsPage`).
 */
import type { Insertable, Selectable } from 'kysely';
import { preparedSelect, type DB } from './database.ts';
import type { PersonalAccessTokensTable } from './schema.ts';

export type PersonalAccessTokenRow = Selectable<PersonalAccessTokensTable>;

/** A token with what authenticating it needs: its user's instance. */
export type PresentedPersonalAccessToken = PersonalAccessTokenRow & { instance_id: string };

export async function insertPersonalAccessToken(db: DB, row: Insertable<PersonalAccessTokensTable>): Promise<void> {
  await db.insertInto('personal_access_tokens').values(row).execute();
}

/** Deletes the user's token; its expiry, or undefined when the user has no token with that id. */
export async function deletePersonalAccessToken(db: DB, userId: string, tokenId: string): Promise<Date | undefined> {
  const row = await db
    .deleteFrom('personal_access_tokens')
    .where('id', '=', tokenId)
    .where('user_id', '=', userId)
    .returning('expires_at')
    .executeTakeFirst();
  return row?.expires_at;
}

/** A token by hash, with its user's instance: one indexed read, as a prepared statement. */
export async function findPersonalAccessToken(db: DB, tokenHash: string): Promise<PresentedPersonalAccessToken | undefined> {
  const [row] = await personalAccessTokenStatement(db, tokenHash);
  return row;
}

const personalAccessTokenStatement = preparedSelect('find_personal_access_token', (db: DB, tokenHash: string) =>
  db
    .selectFrom('personal_access_tokens')
    .innerJoin('users', 'users.id', 'personal_access_tokens.user_id')
    .selectAll('personal_access_tokens')
    .select('users.instance_id')
    .where('personal_access_tokens.token_hash', '=', tokenHash),
);
