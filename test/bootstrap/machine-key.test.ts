/** `machine-key create`: a ZITADEL key file whose private key matches the stored public key. */
import { createPrivateKey, createPublicKey, createSign, createVerify } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import { applyBootstrap } from '../../src/bootstrap/apply.ts';
import { parseBootstrap } from '../../src/bootstrap/schema.ts';
import { createMachineKey, MachineKeyError } from '../../src/cli/machine-key.ts';
import type { DB } from '../../src/store/database.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import { minimalDocument, rsaKey } from './example.ts';
import { stringify } from 'yaml';

let database: FreshDatabase;
let db: DB;
let reporterId: string;
let orgId: string;

beforeAll(async () => {
  database = await freshDatabase();
  db = database.db;
  await applyBootstrap(db, parseBootstrap(stringify(minimalDocument(rsaKey().publicPem)), 'bootstrap.yaml'));
  const reporter = await db.selectFrom('users').select(['id', 'org_id']).where('user_name', '=', 'reporter').executeTakeFirstOrThrow();
  reporterId = reporter.id;
  orgId = reporter.org_id;
}, 120_000);

afterAll(async () => {
  await database.close();
});

describe('machine-key create', () => {
  it("writes ZITADEL's key file layout and stores only the public key", async () => {
    const keyFile = await createMachineKey(db, { userName: 'Reporter' });
    expect(Object.keys(keyFile)).toEqual(['type', 'keyId', 'key', 'expirationDate', 'userId']);
    expect(keyFile.expirationDate).toBe('9999-12-31T23:59:59Z'); // ZITADEL's "never"
    expect(keyFile).toMatchObject({ type: 'serviceaccount', userId: reporterId, keyId: expect.stringMatching(/^\d+$/) });
    expect(keyFile.key).toMatch(/^-----BEGIN RSA PRIVATE KEY-----\n[\s\S]+\n-----END RSA PRIVATE KEY-----\n$/);

    const stored = await db.selectFrom('machine_keys').selectAll().where('id', '=', keyFile.keyId).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ user_id: reporterId, expires_at: null });
    expect(stored.public_key).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(stored.public_key).not.toContain('PRIVATE');

    const data = 'gatehouse';
    const signature = createSign('RSA-SHA256').update(data).sign(createPrivateKey(keyFile.key));
    expect(createVerify('RSA-SHA256').update(data).verify(createPublicKey(stored.public_key), signature)).toBe(true);
    expect(createPrivateKey(keyFile.key).asymmetricKeyDetails?.modulusLength).toBe(2048);

    // The JWT profile grant's assertion: signed with the key file, verified with the stored key.
    const assertion = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: keyFile.keyId })
      .setIssuer(keyFile.userId)
      .setSubject(keyFile.userId)
      .setAudience('http://localhost:8080')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(createPrivateKey(keyFile.key));
    const { payload } = await jwtVerify(assertion, createPublicKey(stored.public_key), { audience: 'http://localhost:8080' });
    expect(payload.sub).toBe(reporterId);

    const event = await db.selectFrom('events').selectAll().orderBy('sequence', 'desc').limit(1).executeTakeFirstOrThrow();
    expect(event).toMatchObject({
      aggregate_type: 'user', aggregate_id: reporterId, resource_owner: orgId, event_type: 'user.machine.key.added',
      payload: { keyId: keyFile.keyId, expiresAt: null },
    });
  });

  it('stores the expiry when given', async () => {
    const expiresAt = new Date('2040-01-01T00:00:00Z');
    const keyFile = await createMachineKey(db, { userName: 'reporter', expiresAt });
    const stored = await db.selectFrom('machine_keys').select('expires_at').where('id', '=', keyFile.keyId).executeTakeFirstOrThrow();
    expect(stored.expires_at?.toISOString()).toBe('2040-01-01T00:00:00.000Z');
  });

  it.each([
    ['an unknown user', 'nobody'],
    ['a human user', 'alice'],
  ])('refuses %s and stores nothing', async (_label, userName) => {
    const before = await db.selectFrom('machine_keys').select('id').execute();
    const error: unknown = await createMachineKey(db, { userName }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MachineKeyError);
    expect((error as Error).message).toBe(`no machine user named "${userName}"`);
    expect(await db.selectFrom('machine_keys').select('id').execute()).toEqual(before);
  });

  it('refuses an expiry in the past', async () => {
    await expect(createMachineKey(db, { userName: 'reporter', expiresAt: new Date(Date.now() - 1000) })).rejects.toThrow(MachineKeyError);
  });
});
