import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import type { Database } from '../../store/schema.ts';
import { CAPITALS_AND_DIGITS, storeNewCode, tryCode, type CodeKind, type PendingCode, type TriesWithoutId } from './one-time-codes.ts';

// The rules of tries on a table kept in memory; the tables themselves, the mail and the link rule are
// tested against the real database by the suites of each kind (test/api/, test/mail/).
// The database is never asked: the table in memory stands in for it.
const db = new Kysely<Database>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (kysely) => new PostgresIntrospector(kysely),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

const T0 = new Date(Date.UTC(2026, 10, 27, 12, 0, 0));
const USER = 'u1';

function kindOf(withoutId: TriesWithoutId, alphabet = CAPITALS_AND_DIGITS) {
  const rows = new Map<string, PendingCode>();
  const kind: CodeKind<PendingCode, string, string> = {
    alphabet,
    length: 8,
    lifetimeSeconds: 60,
    maxTries: 3,
    newId: () => 'id-1',
    withoutId,
    table: {
      save: async (_db, userId, code) => void rows.set(userId, { ...code, attempts: 0, anonymous_attempts: 0 }),
      findForUpdate: async (_db, userId) => rows.get(userId),
      countWrongTry: async (_db, userId, counter) => {
        const row = rows.get(userId);
        if (row) row[counter] = (row[counter] ?? 0) + 1;
      },
      remove: async (_db, userId) => void rows.delete(userId),
    },
    addedEvent: 'user.human.email.code.added',
    defaultLink: (externalUrl) => `${externalUrl}/code`,
    mail: () => ({ subject: '', text: '', html: '' }),
  };
  return { kind, rows };
}

const wrongOf = (code: string) => (code.startsWith('A') ? 'B' : 'A') + code.slice(1);

describe('one-time codes', () => {
  it('a right code is right once, read without regard to case for an alphabet without small letters', async () => {
    const { kind } = kindOf('count');
    const { code } = await storeNewCode(db, kind, USER, T0);
    expect(code).toMatch(/^[A-Z0-9]{8}$/);
    expect((await tryCode(db, kind, USER, { code: ` ${code.toLowerCase()} ` }, T0)).result).toBe('right');
    expect((await tryCode(db, kind, USER, { code }, T0)).result).toBe('missing');
  });

  it('keeps a right code pending when the try says so', async () => {
    const { kind } = kindOf('count');
    const { code } = await storeNewCode(db, kind, USER, T0);
    expect((await tryCode(db, kind, USER, { code, keep: true }, T0)).result).toBe('right');
    expect((await tryCode(db, kind, USER, { code }, T0)).result).toBe('right');
  });

  it('reads a code of small and capital letters as typed', async () => {
    const { kind } = kindOf('count', 'abcABC');
    const { code } = await storeNewCode(db, kind, USER, T0);
    const flipped = [...code].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');
    expect((await tryCode(db, kind, USER, { code: flipped }, T0)).result).toBe('wrong');
  });

  it('is expired at the end of its lifetime', async () => {
    const { kind } = kindOf('count');
    const { code } = await storeNewCode(db, kind, USER, T0);
    expect((await tryCode(db, kind, USER, { code }, new Date(T0.getTime() + 60_000))).result).toBe('expired');
  });

  it('is void after its wrong tries: the right code is refused then', async () => {
    const { kind, rows } = kindOf('count');
    const { code } = await storeNewCode(db, kind, USER, T0);
    for (let i = 0; i < 3; i++) expect((await tryCode(db, kind, USER, { code: wrongOf(code) }, T0)).result).toBe('wrong');
    expect(rows.get(USER)?.attempts).toBe(3);
    expect((await tryCode(db, kind, USER, { code }, T0)).result).toBe('wrong');
  });

  it.each<[string, TriesWithoutId, { result: string; attempts: number; anonymous: number }]>([
    ['counts towards the code', 'count', { result: 'wrong', attempts: 1, anonymous: 0 }],
    ['is refused unchecked and counts nowhere', 'refuse', { result: 'wrong', attempts: 0, anonymous: 0 }],
    ['is counted apart', { countApartUpTo: 2 }, { result: 'wrong', attempts: 0, anonymous: 1 }],
  ])('a wrong try without the id %s', async (_name, withoutId, expected) => {
    const { kind, rows } = kindOf(withoutId);
    const { code } = await storeNewCode(db, kind, USER, T0);
    expect((await tryCode(db, kind, USER, { code: wrongOf(code) }, T0)).result).toBe(expected.result);
    expect([rows.get(USER)?.attempts, rows.get(USER)?.anonymous_attempts]).toEqual([expected.attempts, expected.anonymous]);
  });

  it('counts tries with the id or by an authenticated caller towards the code', async () => {
    const { kind, rows } = kindOf('refuse');
    const { code } = await storeNewCode(db, kind, USER, T0);
    await tryCode(db, kind, USER, { code: wrongOf(code), codeId: 'id-1' }, T0);
    await tryCode(db, kind, USER, { code: wrongOf(code), authenticated: true }, T0);
    await tryCode(db, kind, USER, { code: wrongOf(code), codeId: 'id-2' }, T0);
    expect(rows.get(USER)?.attempts).toBe(2);
    expect((await tryCode(db, kind, USER, { code, codeId: 'id-2' }, T0)).result).toBe('wrong');
    expect((await tryCode(db, kind, USER, { code, codeId: 'id-1' }, T0)).result).toBe('right');
  });

  it('refuses tries without the id once they reach their own limit, and the code stays valid under its id', async () => {
    const { kind } = kindOf({ countApartUpTo: 2 });
    const { code } = await storeNewCode(db, kind, USER, T0);
    for (let i = 0; i < 2; i++) await tryCode(db, kind, USER, { code: wrongOf(code) }, T0);
    expect((await tryCode(db, kind, USER, { code }, T0)).result).toBe('wrong');
    expect((await tryCode(db, kind, USER, { code, codeId: 'id-1' }, T0)).result).toBe('right');
  });
});
