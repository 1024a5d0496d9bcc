/**
 * The effective settings the login pages read (domain/instance/directory.ts `orgSettings`): an
 * organization's own policies, else the instance's, else ZITADEL's defaults; cached, and dropped in
 * every process once a change moves the change mark (docs/decisions.md#several-processes-on-one-database),
 * here two directories on one database, as two processes have.
 */
import { Directory } from '../../src/domain/instance/directory.ts';
import {
  activateBranding, addOrgBranding, addOrgLoginPolicy, changeBranding, changeLoginPolicy, DEFAULT_LABEL, DEFAULT_LOGIN, resetOrgLoginPolicy,
} from '../../src/domain/instance/policies.ts';
import { changeMark } from '../../src/domain/kernel/events.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

let database: FreshDatabase;
const INSTANCE = '900000000000000001';
const DEFAULT_ORG = '900000000000000002';
const OTHER_ORG = '900000000000000003';
const writer = { instanceId: INSTANCE, creator: 'test' };

beforeAll(async () => {
  database = await freshDatabase();
  await database.db.insertInto('instances').values({ id: INSTANCE, name: 'test', default_org_id: null, created_at: new Date() }).execute();
  await database.db.insertInto('orgs').values([
    { id: DEFAULT_ORG, instance_id: INSTANCE, name: 'Default', primary_domain: 'default.test', created_at: new Date(), changed_at: new Date() },
    { id: OTHER_ORG, instance_id: INSTANCE, name: 'Other', primary_domain: 'other.test', created_at: new Date(), changed_at: new Date() },
  ]).execute();
  await database.db.updateTable('instances').set({ default_org_id: DEFAULT_ORG }).where('id', '=', INSTANCE).execute();
});
afterAll(() => database.close());

it('answers ZITADEL\'s defaults before anything is set, with registration in the default organization only', async () => {
  const directory = new Directory(database.db);
  const settings = await directory.orgSettings(INSTANCE, OTHER_ORG);
  expect(settings.branding).toMatchObject({ ...DEFAULT_LABEL, source: 'default', images: { logo: null, logoDark: null, icon: null, iconDark: null } });
  expect(settings.login).toMatchObject({ source: 'default', allowUsernamePassword: true, passwordlessAllowed: true, allowRegister: false, passwordCheckLifetime: 240 * 3600 });
  expect((await directory.orgSettings(INSTANCE, DEFAULT_ORG)).login.allowRegister).toBe(true);
});

it('follows a change made by another process once the change mark moves', async () => {
  const reader = new Directory(database.db);
  let seen = await changeMark(database.db);
  const watch = async () => {
    const latest = await changeMark(database.db);
    if (latest !== seen) reader.clear();
    seen = latest;
  };
  expect((await reader.orgSettings(INSTANCE, OTHER_ORG)).branding.primaryColor).toBe('#5469d4');

  await database.db.transaction().execute(async (trx) => {
    await addOrgBranding(trx, writer, OTHER_ORG, { ...DEFAULT_LABEL, primaryColor: '#123456' });
    await addOrgLoginPolicy(trx, writer, OTHER_ORG, { ...DEFAULT_LOGIN, forceMfa: true, allowRegister: true });
  });
  await watch();
  const preview = await reader.orgSettings(INSTANCE, OTHER_ORG);
  // The branding is only in the preview; the login policy applies at once.
  expect(preview.branding).toMatchObject({ primaryColor: '#5469d4', source: 'default' });
  expect(preview.login).toMatchObject({ source: 'org', forceMfa: true, allowRegister: true });
  // The organization's registration switch follows its policy (docs/security.md 10.12).
  expect((await database.db.selectFrom('orgs').select('allow_register').where('id', '=', OTHER_ORG).executeTakeFirstOrThrow()).allow_register).toBe(true);

  await database.db.transaction().execute((trx) => activateBranding(trx, writer, { instanceId: INSTANCE, orgId: OTHER_ORG }));
  // Cached until the mark moves.
  expect((await reader.orgSettings(INSTANCE, OTHER_ORG)).branding.primaryColor).toBe('#5469d4');
  await watch();
  expect((await reader.orgSettings(INSTANCE, OTHER_ORG)).branding).toMatchObject({ primaryColor: '#123456', source: 'org' });

  await database.db.transaction().execute((trx) => resetOrgLoginPolicy(trx, writer, OTHER_ORG));
  await watch();
  expect((await reader.orgSettings(INSTANCE, OTHER_ORG)).login).toMatchObject({ source: 'default', forceMfa: false, allowRegister: false });
});

it('lets the instance\'s policy decide registration in the default organization', async () => {
  const directory = new Directory(database.db);
  await database.db.transaction().execute(async (trx) => {
    await changeBranding(trx, writer, { instanceId: INSTANCE }, { ...DEFAULT_LABEL, primaryColor: '#abcdef' });
    await activateBranding(trx, writer, { instanceId: INSTANCE });
  });
  await database.db.transaction().execute((trx) => changeLoginPolicy(trx, writer, { instanceId: INSTANCE }, { ...DEFAULT_LOGIN, allowRegister: false }));
  const settings = await directory.orgSettings(INSTANCE, DEFAULT_ORG);
  expect(settings.login).toMatchObject({ source: 'instance', allowRegister: false });
  expect(settings.branding).toMatchObject({ source: 'instance', primaryColor: '#abcdef', ownerId: INSTANCE });
});
