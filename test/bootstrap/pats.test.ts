/**
 * Personal access tokens in the bootstrap file (docs/bootstrap.md#personal-access-tokens): written
 * to their files after the commit, mode 600; left alone when the file still holds the token the
 * file describes; rotated when the expiry changes; never written when the apply fails; and refused
 * with the path and the problem when the entry is wrong. A token from the file authenticates at a
 * real server.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { applyBootstrapFile } from '../../src/bootstrap/apply.ts';
import { BootstrapError } from '../../src/bootstrap/schema.ts';
import { sha256 } from '../../src/domain/kernel/crypto.ts';
import type { DB } from '../../src/store/database.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import { startTestServer } from '../support/gatehouse.ts';

let database: FreshDatabase;
let db: DB;
let dir: string;

beforeAll(async () => {
  database = await freshDatabase();
  db = database.db;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-pats-'));
}, 120_000);

afterAll(async () => {
  await database.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A document whose machine user `ci` keeps tokens in the given files; more YAML after it. */
function document(pats: Array<{ expirationDate?: string; writeTo?: string }>, after = ''): string {
  const entries = pats.map((pat) => `          - ${Object.entries(pat).map(([key, value]) => `${key}: "${value}"`).join('\n            ')}`).join('\n');
  return `orgs:
  - name: Builds
    domain: builds.test
    machines:
      - userName: ci
        roles: [ORG_OWNER]
        pats:
${entries}
${after}`;
}

async function applyYaml(yaml: string, name = 'bootstrap.yaml') {
  const file = path.join(dir, name);
  fs.writeFileSync(file, yaml);
  return applyBootstrapFile(db, file, { serviceName: 'gatehouse' });
}

async function tokenRow(token: string) {
  return db.selectFrom('personal_access_tokens').selectAll().where('token_hash', '=', sha256(token)).executeTakeFirst();
}

const read = (file: string) => fs.readFileSync(path.join(dir, file), 'utf8');

describe('machines[].pats', () => {
  it('writes each token to its file, relative to the bootstrap file, readable by its owner only', async () => {
    const summary = await applyYaml(document([{ expirationDate: '2099-01-01T00:00:00Z', writeTo: 'secrets/ci.pat' }, { expirationDate: '2098-06-30', writeTo: 'second.pat' }]));
    expect(summary.byKind.pat).toEqual({ created: 2, updated: 0, unchanged: 0 });
    for (const [file, expiry] of [['secrets/ci.pat', '2099-01-01T00:00:00.000Z'], ['second.pat', '2098-06-30T00:00:00.000Z']] as const) {
      expect((fs.statSync(path.join(dir, file)).mode & 0o777).toString(8)).toBe('600');
      const token = read(file);
      expect(token).toMatch(/^gatehouse_pat_[A-Za-z0-9_-]{43}\n$/);
      const row = await tokenRow(token.trim());
      expect(row?.expires_at.toISOString()).toBe(expiry);
    }
  });

  it('changes nothing when applied again, and rotates the token when the expiry changes', async () => {
    const before = read('secrets/ci.pat');
    const again = await applyYaml(document([{ expirationDate: '2099-01-01T00:00:00Z', writeTo: 'secrets/ci.pat' }, { expirationDate: '2098-06-30', writeTo: 'second.pat' }]));
    expect(again.byKind.pat).toEqual({ created: 0, updated: 0, unchanged: 2 });
    expect(read('secrets/ci.pat')).toBe(before);

    const rotated = await applyYaml(document([{ expirationDate: '2100-01-01T00:00:00Z', writeTo: 'secrets/ci.pat' }, { expirationDate: '2098-06-30', writeTo: 'second.pat' }]));
    expect(rotated.byKind.pat).toEqual({ created: 0, updated: 1, unchanged: 1 });
    expect(read('secrets/ci.pat')).not.toBe(before);
    expect(await tokenRow(before.trim())).toBeUndefined(); // the old token is removed, not left behind
    expect((await tokenRow(read('secrets/ci.pat').trim()))?.expires_at.toISOString()).toBe('2100-01-01T00:00:00.000Z');
  });

  it('makes a new token when the file is gone or holds something else', async () => {
    fs.rmSync(path.join(dir, 'second.pat'));
    fs.writeFileSync(path.join(dir, 'secrets/ci.pat'), 'not a token\n');
    const summary = await applyYaml(document([{ expirationDate: '2100-01-01T00:00:00Z', writeTo: 'secrets/ci.pat' }, { expirationDate: '2098-06-30', writeTo: 'second.pat' }]));
    expect(summary.byKind.pat).toEqual({ created: 2, updated: 0, unchanged: 0 });
    expect(await tokenRow(read('second.pat').trim())).toBeDefined();
    expect(await tokenRow(read('secrets/ci.pat').trim())).toBeDefined();
  });

  it('writes nothing when the apply fails half-way', async () => {
    const error: unknown = await applyYaml(
      document([{ expirationDate: '2097-01-01', writeTo: 'never.pat' }], '  - name: Clash\n    domain: BUILDS.test\n'),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BootstrapError);
    expect(fs.existsSync(path.join(dir, 'never.pat'))).toBe(false);
    expect(await db.selectFrom('personal_access_tokens').select('id').where('expires_at', '=', new Date('2097-01-01T00:00:00Z')).execute()).toEqual([]);
  });

  it.each([
    [{ writeTo: 'x.pat' }, 'orgs[0].machines[0].pats[0].expirationDate: is required'],
    [{ expirationDate: '2099-01-01' }, 'orgs[0].machines[0].pats[0].writeTo: is required'],
    [{ expirationDate: 'soon', writeTo: 'x.pat' }, 'orgs[0].machines[0].pats[0].expirationDate: must be an RFC 3339 date or time like 2030-01-01T00:00:00Z'],
    [{ expirationDate: '2001-01-01', writeTo: 'x.pat' }, 'orgs[0].machines[0].pats[0].expirationDate: lies in the past'],
    [{ expirationDate: '2099-01-01', writeTo: '.' }, 'orgs[0].machines[0].pats[0].writeTo: . is a folder; name a file'],
  ])('refuses %j', async (pat, problem) => {
    await expect(applyYaml(document([pat]), 'bad.yaml')).rejects.toThrow(problem);
  });

  it('refuses two tokens written to one file', async () => {
    await expect(applyYaml(document([{ expirationDate: '2099-01-01', writeTo: 'same.pat' }, { expirationDate: '2098-01-01', writeTo: './same.pat' }]), 'bad.yaml')).rejects.toThrow(
      'orgs[0].machines[0].pats[1].writeTo:',
    );
  });
});

describe('a token from the bootstrap file', () => {
  it('authorizes API calls at the server', async () => {
    const server = await startTestServer({
      orgs: [{ name: 'Builds', domain: 'builds.test', machines: [{ userName: 'ci', roles: ['ORG_OWNER'], pats: [{ expirationDate: '2099-01-01T00:00:00Z', writeTo: 'ci.pat' }] }] }],
    });
    try {
      const token = fs.readFileSync(path.join(server.config.dataDir, 'ci.pat'), 'utf8').trim();
      const reply = await fetch(`${server.url}/v2/organizations/_search`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
      expect(reply.status).toBe(200);
      expect(((await reply.json()) as { result: { name: string }[] }).result.map((org) => org.name)).toEqual(['Builds']);
    } finally {
      await server.stop();
    }
  });
});
