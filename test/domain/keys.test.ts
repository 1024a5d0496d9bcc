/** Automatic signing-key rotation (docs/decisions.md#signing-keys), driven with explicit clock values. */
import { MasterKey } from '../../src/domain/kernel/crypto.ts';
import { AUTO_ROTATION_LEAD_SECONDS, KeyStore } from '../../src/domain/tokens/keys.ts';
import type { DB } from '../../src/store/database.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

let database: FreshDatabase;
let db: DB;
const masterKey = new MasterKey(Buffer.alloc(32, 3).toString('base64'));
const DAY = 86400;
const config = { signingAlg: 'RS256' as const, keyRotationSeconds: 7 * DAY, maxTokenSeconds: 12 * 3600 };

// the run's migrated database (the embedded one started initdb and every migration here: 19 s)
beforeAll(async () => {
  database = await freshDatabase();
  db = database.db;
});
afterAll(() => database?.close());

it('creates a first key that signs at once, then rotates with a published lead time', async () => {
  const t0 = new Date('2026-01-01T00:00:00Z');
  const store = new KeyStore(db, masterKey, config);
  await store.refresh(t0);
  const first = await store.signer(t0);
  expect(store.published(t0).map((k) => k.kid)).toEqual([first.kid]);

  // Not yet due: nothing changes.
  await store.refresh(new Date(t0.getTime() + 6 * DAY * 1000));
  expect(store.published(t0)).toHaveLength(1);

  // Due: a successor is published, but the first key still signs until the lead time has passed.
  const due = new Date(t0.getTime() + 7 * DAY * 1000);
  await store.refresh(due);
  const published = store.published(due).map((k) => k.kid);
  expect(published).toHaveLength(2);
  expect((await store.signer(due)).kid).toBe(first.kid);
  const successor = published.find((kid) => kid !== first.kid)!;
  const takeover = new Date(due.getTime() + AUTO_ROTATION_LEAD_SECONDS * 1000);
  expect((await store.signer(takeover)).kid).toBe(successor);

  // A second refresh at the same moment does not create a third key (another node may refresh too).
  await new KeyStore(db, masterKey, config).refresh(due);
  await store.refresh(due);
  expect(store.published(due)).toHaveLength(2);

  // The old key stays published while its tokens live, then leaves the set and is pruned.
  expect(store.published(new Date(takeover.getTime() + 11 * 3600 * 1000)).map((k) => k.kid)).toContain(first.kid);
  const later = new Date(takeover.getTime() + 13 * 3600 * 1000);
  expect(store.published(later).map((k) => k.kid)).toEqual([successor]);
  await store.prune(later);
  expect(await db.selectFrom('signing_keys').select('id').execute()).toEqual([{ id: successor }]);
});

it('stores private keys encrypted under the master key', async () => {
  const rows = await db.selectFrom('signing_keys').select('private_key').execute();
  for (const row of rows) {
    expect(row.private_key).toMatch(/^v1\./);
    expect(row.private_key).not.toContain('PRIVATE KEY');
    expect(masterKey.decrypt(row.private_key)).toContain('BEGIN PRIVATE KEY');
  }
});
