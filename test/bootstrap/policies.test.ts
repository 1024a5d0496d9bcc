/**
 * `branding` and `loginPolicy` in the bootstrap file (docs/bootstrap.md#branding-and-login-policy):
 * validated before anything is written, applied as declared state (the active branding, images
 * from files beside the bootstrap file), and applied again without a change.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { applyBootstrap } from '../../src/bootstrap/apply.ts';
import { parseBootstrap } from '../../src/bootstrap/schema.ts';
import { bootstrapProblems } from '../support/bootstrap-problems.ts';
import { effectiveBranding, effectiveLoginPolicy } from '../../src/domain/instance/policies.ts';
import type { DB } from '../../src/store/database.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const GIF = Buffer.from('R0lGODlhAQABAAAAACwAAAAAAQABAAA=', 'base64');
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><rect width="1" height="1"/></svg>\n';

const INSTANCE_ORG = '100000000000000101';
const BRANDED = '100000000000000102';
const OLD_STYLE = '100000000000000103';

let dir: string;
let file: string;

function writeImages(): void {
  fs.mkdirSync(path.join(dir, 'images'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'images', 'logo.png'), PNG);
  fs.writeFileSync(path.join(dir, 'images', 'logo-dark.gif'), GIF);
  fs.writeFileSync(path.join(dir, 'icon.svg'), SVG);
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'not an image\n');
  fs.writeFileSync(path.join(dir, 'huge.png'), Buffer.concat([PNG, Buffer.alloc(512 * 1024)]));
}

function document(edit: (doc: Record<string, any>) => void = () => {}): string { // eslint-disable-line @typescript-eslint/no-explicit-any -- edited freely
  const doc: Record<string, any> = { // eslint-disable-line @typescript-eslint/no-explicit-any
    branding: { primaryColor: '#0b5fff', backgroundColorDark: '#0a0a0a', themeMode: 'THEME_MODE_AUTO', icon: 'icon.svg' },
    loginPolicy: { allowRegister: false, passwordCheckLifetime: '24h', secondFactors: ['SECOND_FACTOR_TYPE_OTP'] },
    orgs: [
      { id: INSTANCE_ORG, name: 'Home', domain: 'home.test' },
      {
        id: BRANDED,
        name: 'Branded',
        domain: 'branded.test',
        branding: { primaryColor: 'rgb(10, 120, 60)', hideLoginNameSuffix: true, themeMode: 'THEME_MODE_DARK', logo: 'images/logo.png', logoDark: './images/logo-dark.gif' },
        loginPolicy: { allowRegister: true, hidePasswordReset: true, passwordlessType: 'PASSWORDLESS_TYPE_NOT_ALLOWED', defaultRedirectUri: 'https://branded.test/home', mfaInitSkipLifetime: '0s' },
      },
      { id: OLD_STYLE, name: 'Old style', domain: 'old.test', allowRegister: true },
    ],
  };
  edit(doc);
  return stringify(doc);
}

const problems = (text: string) => bootstrapProblems(text, file);

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-branding-'));
  file = path.join(dir, 'bootstrap.yaml');
  writeImages();
});

describe('validation', () => {
  it('reads branding and login policies, images from files beside the bootstrap file', () => {
    const { document: read } = parseBootstrap(document(), file);
    expect(read.branding).toMatchObject({ colours: { primaryColor: '#0b5fff' }, themeMode: 'auto', images: { icon: { contentType: 'image/svg+xml' } } });
    expect(read.loginPolicy?.values).toEqual({ allowRegister: false, passwordCheckLifetime: 86400, secondFactors: ['otp'] });
    expect(read.orgs[1]?.branding?.images.logoDark?.contentType).toBe('image/gif');
    expect(read.orgs[1]?.loginPolicy?.values).toMatchObject({ passwordlessAllowed: false, mfaInitSkipLifetime: 0 });
    expect(read.orgs.map((org) => org.allowRegister)).toEqual([undefined, true, true]);
  });

  it.each([
    ['a colour that is not one', (doc: any) => (doc.orgs[1].branding.primaryColor = 'blue'), 'orgs[1].branding.primaryColor', /must be a colour/], // eslint-disable-line @typescript-eslint/no-explicit-any
    ['a missing image', (doc: any) => (doc.branding.logo = 'nowhere.png'), 'branding.logo', /nowhere.png: no such file \(paths are relative to the bootstrap file\)/], // eslint-disable-line @typescript-eslint/no-explicit-any
    ['a file that is not an image', (doc: any) => (doc.orgs[1].branding.icon = 'notes.txt'), 'orgs[1].branding.icon', /notes.txt is not an image: PNG, JPEG, GIF, WebP or SVG/], // eslint-disable-line @typescript-eslint/no-explicit-any
    ['an oversized image', (doc: any) => (doc.branding.iconDark = 'huge.png'), 'branding.iconDark', /huge.png is larger than 512 KiB/], // eslint-disable-line @typescript-eslint/no-explicit-any
    ['an unknown theme mode', (doc: any) => (doc.branding.themeMode = 'DARK'), 'branding.themeMode', /must be one of "THEME_MODE_UNSPECIFIED", "THEME_MODE_AUTO", "THEME_MODE_DARK", "THEME_MODE_LIGHT"/], // eslint-disable-line @typescript-eslint/no-explicit-any
    ['a misspelt key', (doc: any) => (doc.loginPolicy.forceMFA = true), 'loginPolicy.forceMFA', /unknown key \(did you mean "forceMfa"\?\)/], // eslint-disable-line @typescript-eslint/no-explicit-any
    ['a duration without a unit', (doc: any) => (doc.loginPolicy.passwordCheckLifetime = '240'), 'loginPolicy.passwordCheckLifetime', /must be a duration like "240h"/], // eslint-disable-line @typescript-eslint/no-explicit-any
    ['a duration over ten years', (doc: any) => (doc.loginPolicy.mfaInitSkipLifetime = '90000h'), 'loginPolicy.mfaInitSkipLifetime', /must be at most 3650 days/], // eslint-disable-line @typescript-eslint/no-explicit-any
    ['a relative redirect URI', (doc: any) => (doc.orgs[1].loginPolicy.defaultRedirectUri = '/home'), 'orgs[1].loginPolicy.defaultRedirectUri', /must be an absolute http or https URL/], // eslint-disable-line @typescript-eslint/no-explicit-any
    ['an unknown second factor', (doc: any) => (doc.loginPolicy.secondFactors = ['SECOND_FACTOR_TYPE_SMS']), 'loginPolicy.secondFactors[0]', /must be one of "SECOND_FACTOR_TYPE_OTP"/], // eslint-disable-line @typescript-eslint/no-explicit-any
    ['two registration switches that disagree', (doc: any) => (doc.orgs[1].allowRegister = false), 'orgs[1].loginPolicy.allowRegister', /is true but orgs\[1\].allowRegister is false: give it once, in loginPolicy/], // eslint-disable-line @typescript-eslint/no-explicit-any
  ])('reports %s at its path', (_what, edit, at, message) => {
    const error = problems(document(edit));
    expect(error.issues).toEqual([expect.objectContaining({ file, path: at, message: expect.stringMatching(message) })]);
  });

  it('accepts both registration switches when they agree', () => {
    const { document: read } = parseBootstrap(document((doc) => (doc.orgs[1].allowRegister = true)), file);
    expect(read.orgs[1]?.allowRegister).toBe(true);
  });
});

describe('applying', () => {
  let database: FreshDatabase;
  let db: DB;
  beforeAll(async () => {
    database = await freshDatabase();
    db = database.db;
  }, 120_000);
  afterAll(() => database.close());

  const apply = (text: string) => applyBootstrap(db, parseBootstrap(text, file));
  const events = async (after: string) =>
    (await db.selectFrom('events').select(['event_type', 'aggregate_id']).where('sequence', '>', after).orderBy('sequence').execute()).map((e) => `${e.event_type} ${e.aggregate_id}`);
  const last = async () => (await db.selectFrom('events').select('sequence').orderBy('sequence', 'desc').limit(1).executeTakeFirst())?.sequence ?? '0';

  it('makes the declared branding active and the login policies, then changes nothing when applied again', async () => {
    const summary = await apply(document());
    const instanceId = summary.instanceId;
    const instance = await effectiveBranding(db, { instanceId });
    expect(instance).toMatchObject({ source: 'instance', primaryColor: '#0b5fff', backgroundColorDark: '#0a0a0a', backgroundColor: '#fafafa', themeMode: 'auto' });
    expect(instance.images.icon).toMatch(/^policy\/label\/icon-\d+$/);

    const branded = await effectiveBranding(db, { instanceId, orgId: BRANDED });
    // Colours left out are the instance's as the file made it.
    expect(branded).toMatchObject({ source: 'org', primaryColor: 'rgb(10, 120, 60)', backgroundColorDark: '#0a0a0a', hideLoginNameSuffix: true, themeMode: 'dark' });
    expect(branded.images.icon).toBeNull();
    const logo = await db.selectFrom('assets').select(['content_type', 'data']).where('owner_id', '=', BRANDED).where('key', '=', branded.images.logo!).executeTakeFirstOrThrow();
    expect(logo.content_type).toBe('image/png');
    expect(Buffer.from(logo.data)).toEqual(PNG);
    expect((await effectiveBranding(db, { instanceId, orgId: OLD_STYLE })).source).toBe('instance');

    expect(await effectiveLoginPolicy(db, { instanceId })).toMatchObject({ source: 'instance', allowRegister: false, passwordCheckLifetime: 86400, secondFactors: ['otp'] });
    const login = await effectiveLoginPolicy(db, { instanceId, orgId: BRANDED });
    expect(login).toMatchObject({ source: 'org', allowRegister: true, hidePasswordReset: true, passwordlessAllowed: false, passwordCheckLifetime: 86400, mfaInitSkipLifetime: 0, defaultRedirectUri: 'https://branded.test/home' });
    // The older allowRegister still opens registration, and the login settings say so.
    expect(await effectiveLoginPolicy(db, { instanceId, orgId: OLD_STYLE })).toMatchObject({ source: 'instance', allowRegister: true });
    // The instance closed registration; its default organization follows it.
    expect(await effectiveLoginPolicy(db, { instanceId, orgId: INSTANCE_ORG })).toMatchObject({ source: 'instance', allowRegister: false });
    const switches = await db.selectFrom('orgs').select(['id', 'allow_register']).orderBy('id').execute();
    expect(switches).toEqual([{ id: INSTANCE_ORG, allow_register: null }, { id: BRANDED, allow_register: true }, { id: OLD_STYLE, allow_register: true }]);

    const before = await last();
    const again = await apply(document());
    expect({ created: again.created, updated: again.updated }).toEqual({ created: 0, updated: 0 });
    expect(await events(before)).toEqual([]);
  });

  it('writes only what changed: a new logo, a colour, a removed image', async () => {
    const instanceId = (await db.selectFrom('instances').select('id').executeTakeFirstOrThrow()).id;
    const previous = (await effectiveBranding(db, { instanceId, orgId: BRANDED })).images.logo;
    fs.writeFileSync(path.join(dir, 'images', 'logo.png'), GIF);
    const before = await last();
    const summary = await apply(document((doc) => {
      doc.orgs[1].branding.primaryColor = '#00aa00';
      delete doc.orgs[1].branding.logoDark;
    }));
    expect(summary.objects.filter((o) => o.action === 'updated').map((o) => o.path)).toEqual(['orgs[1]']);
    const branded = await effectiveBranding(db, { instanceId, orgId: BRANDED });
    expect(branded).toMatchObject({ primaryColor: '#00aa00', images: { logoDark: null } });
    expect(branded.images.logo).not.toBe(previous);
    expect(await events(before)).toEqual([
      `org.policy.label.changed ${BRANDED}`, // the colour
      `org.policy.label.changed ${BRANDED}`, // the new logo
      `org.policy.label.changed ${BRANDED}`, // the dark logo removed
      `org.policy.label.activated ${BRANDED}`,
    ]);
    // Images no branding shows any more are gone.
    expect((await db.selectFrom('assets').select('key').where('owner_id', '=', BRANDED).execute()).map((row) => row.key)).toEqual([branded.images.logo]);
    fs.writeFileSync(path.join(dir, 'images', 'logo.png'), PNG);
  });

  it('an organization left without branding or login policy in the file keeps what the API made', async () => {
    const instanceId = (await db.selectFrom('instances').select('id').executeTakeFirstOrThrow()).id;
    const summary = await apply(document((doc) => {
      delete doc.orgs[1].branding;
      delete doc.orgs[1].loginPolicy;
      doc.orgs[1].allowRegister = true;
    }));
    expect(summary.updated).toBe(0);
    expect((await effectiveBranding(db, { instanceId, orgId: BRANDED })).source).toBe('org');
    expect((await effectiveLoginPolicy(db, { instanceId, orgId: BRANDED })).source).toBe('org');
  });
});
