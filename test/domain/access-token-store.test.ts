/**
 * The batched access-token insert (store/tokens.ts): rows travel as one array per column, arrays of a
 * row in PostgreSQL's array syntax, and the statement runs prepared on PostgreSQL. What goes in comes
 * back exactly, whatever the strings hold, on both databases; a batch is one statement, so one bad row
 * stores none.
 */
import { sql } from 'kysely';
import { findAccessToken, findRefreshTokenByHash, findTokenByHash, insertAccessTokens, type NewAccessToken } from '../../src/store/tokens.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import { plansOf } from '../support/list-oracle.ts';

let next = 0;
const token = (overrides: Partial<NewAccessToken> = {}): NewAccessToken => {
  next += 1;
  return {
    id: `t${next}`,
    instance_id: 'instance',
    token_hash: `hash-${next}`,
    client_id: 'client',
    subject: 'subject',
    scopes: ['openid'],
    audience: ['client'],
    grant_id: null,
    session_id: null,
    actor: null,
    auth_time: null,
    amr: null,
    created_at: new Date(1_800_000_000_000),
    expires_at: new Date(1_800_003_600_000),
    ...overrides,
  };
};

describe('storing access tokens in batches', () => {
  let database: FreshDatabase;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(() => database.close());

  it('stores every column as given, and every string as it is', async () => {
    const awkward = ['a"b', 'back\\slash', 'comma,brace{}', 'two words', '', 'NULL', 'ümlaut', "'quote'"];
    const rows = [
      token({ scopes: awkward, audience: ['x', ...awkward] }),
      token({
        grant_id: 'grant',
        session_id: 'session',
        actor: JSON.stringify({ sub: 'admin', nested: { quote: '"' } }),
        auth_time: new Date(1_799_999_000_000),
        amr: ['pwd', 'otp'],
        client_id: 'client "quoted"',
        subject: 'sub\\ject',
      }),
      token({ scopes: [], audience: [] }),
    ];
    expect(await insertAccessTokens(database.db, rows)).toEqual([undefined, undefined, undefined]);
    for (const row of rows) {
      const stored = await findTokenByHash(database.db, row.token_hash);
      expect(stored).toMatchObject({
        id: row.id,
        instance_id: row.instance_id,
        kind: 'access',
        client_id: row.client_id,
        subject: row.subject,
        scopes: row.scopes,
        audience: row.audience,
        grant_id: row.grant_id,
        session_id: row.session_id,
        actor: row.actor === null ? null : JSON.parse(row.actor),
        auth_time: row.auth_time,
        amr: row.amr,
        created_at: row.created_at,
        expires_at: row.expires_at,
        absolute_expires_at: null,
        revoked_at: null,
        used_at: null,
      });
    }
  });

  it('runs the same statement for batches of any size, and an empty batch is no statement', async () => {
    expect(await insertAccessTokens(database.db, [])).toEqual([]);
    for (const size of [1, 7, 64]) {
      const rows = Array.from({ length: size }, () => token());
      await insertAccessTokens(database.db, rows);
      const { rows: found } = await sql<{ n: string }>`select count(*) as n from tokens where id in (${sql.join(rows.map((row) => row.id))})`.execute(database.db);
      expect(Number(found[0]!.n)).toBe(size);
    }
  });

  // PGlite runs the text as it is (the marker is a comment): the first test covers it there.
  const onPostgres = process.env['TEST_DATABASE_URL'] ? it : it.skip;
  onPostgres('is a named prepared statement of the connection on PostgreSQL', async () => {
    const prepared = await database.db.connection().execute(async (connection) => {
      await insertAccessTokens(connection, [token()]);
      const { rows } = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(connection);
      return rows;
    });
    expect(prepared).toEqual([{ name: 'insert_access_tokens', statement: expect.stringMatching(/^\/\* prepared:insert_access_tokens \*\/ ?insert into tokens/) }]);
  });

  it('stores none of a batch with a bad row (a token id twice), so the batcher can retry row by row', async () => {
    const first = token();
    const rows = [token(), token({ id: first.id }), first];
    await expect(insertAccessTokens(database.db, rows)).rejects.toThrow();
    for (const row of rows) expect(await findTokenByHash(database.db, row.token_hash)).toBeUndefined();
  });
});

const pgOnly = process.env['TEST_DATABASE_URL'] ? describe : describe.skip;

// Every opaque token presented is found by its hash: through the hash index, whatever the table holds.
pgOnly('finding a stored token by its hash (PostgreSQL, 20,000 tokens)', () => {
  let database: FreshDatabase;
  let wanted = '';
  beforeAll(async () => {
    database = await freshDatabase();
    for (let batch = 0; batch < 40; batch++) {
      const rows = Array.from({ length: 500 }, () => token());
      await insertAccessTokens(database.db, rows);
      if (batch === 20) wanted = rows[0]!.token_hash;
    }
    await sql`analyze tokens`.execute(database.db);
  }, 60_000);
  afterAll(() => database.close());

  it.each([
    ['an access token', (db: FreshDatabase['db']) => findAccessToken(db, wanted)],
    ['a token of either kind', (db: FreshDatabase['db']) => findTokenByHash(db, wanted)],
    ['a refresh token', (db: FreshDatabase['db']) => findRefreshTokenByHash(db, wanted)],
  ])('%s reads the hash index', async (_name, find) => {
    const plan = await plansOf(database.databaseUrl!, find);
    expect(plan).toMatch(/Index Scan using tokens_hash_idx on tokens/);
    expect(plan).not.toMatch(/Seq Scan on tokens/);
  });
});
