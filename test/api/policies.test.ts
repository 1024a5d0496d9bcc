/**
 * Branding and the login policy through ZITADEL's v1 calls (docs/branding-and-login-policy.md): a
 * real server, tokens from its token endpoint, clients built from ZITADEL's own descriptors
 * (@zitadel/proto) over gRPC, gRPC-web, Connect and REST. Changes go to the preview and show only
 * after activation; an organization owner reaches only its own organization's policies.
 */
import { Code, createClient, type Transport } from '@connectrpc/connect';
import { AdminService } from '@zitadel/proto/zitadel/admin_pb.js';
import { ManagementService } from '@zitadel/proto/zitadel/management_pb.js';
import { PasswordlessType, SecondFactorType, ThemeMode } from '@zitadel/proto/zitadel/policy_pb.js';
import { SettingsService } from '@zitadel/proto/zitadel/settings/v2/settings_service_pb.js';
import { ThemeMode as ThemeModeV2 } from '@zitadel/proto/zitadel/settings/v2/branding_settings_pb.js';
import { ResourceOwnerType } from '@zitadel/proto/zitadel/settings/v2/settings_pb.js';
import { textColourOn } from '../../src/domain/instance/colours.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { apiTokens, failure, managementDocument, MGMT, transports, type Caller } from '../support/management.ts';

let server: TestServer;
let tokens: Record<Caller, string>;

beforeAll(async () => {
  server = await startTestServer(managementDocument());
  tokens = await apiTokens(server);
});
afterAll(() => server.stop());

const as = (caller: Caller, orgId?: string) => ({ headers: { authorization: `Bearer ${tokens[caller]}`, ...(orgId === undefined ? {} : { 'x-zitadel-orgid': orgId }) } });

const COLOURS = {
  primaryColor: '#112233',
  backgroundColor: '#fefefe',
  warnColor: 'rgb(200, 0, 0)',
  fontColor: '#000',
  primaryColorDark: 'hsl(210, 50%, 40%)',
  backgroundColorDark: '#101010',
  warnColorDark: '#ff0000',
  fontColorDark: '#ffffff',
};

let instanceRounds = 0;

describe.each(transports(() => server))('over %s', (_name, transport: () => Transport) => {
  const management = () => createClient(ManagementService, transport());
  const admin = () => createClient(AdminService, transport());
  const settings = () => createClient(SettingsService, transport());

  it('an organization owner adds branding, previews it, and activates it', async () => {
    const mgmt = management();
    const before = await mgmt.getLabelPolicy({}, as('orgAdmin'));
    expect(before.isDefault).toBe(true);

    const added = await mgmt.addCustomLabelPolicy({ ...COLOURS, hideLoginNameSuffix: true, themeMode: ThemeMode.DARK }, as('orgAdmin'));
    expect(added.details?.resourceOwner).toBe(MGMT.org);
    expect(added.details?.sequence).toBeGreaterThan(0n);

    // The preview has it; the active policy (and the login pages' read) does not yet.
    const preview = await mgmt.getPreviewLabelPolicy({}, as('orgAdmin'));
    expect(preview).toMatchObject({ isDefault: false, policy: { primaryColor: '#112233', themeMode: ThemeMode.DARK, hideLoginNameSuffix: true } });
    expect((await mgmt.getLabelPolicy({}, as('orgAdmin'))).isDefault).toBe(true);
    const unchanged = await settings().getBrandingSettings({ ctx: { resourceOwner: { case: 'orgId', value: MGMT.org } } }, as('orgAdmin'));
    expect(unchanged.settings?.resourceOwnerType).toBe(ResourceOwnerType.INSTANCE);

    await mgmt.activateCustomLabelPolicy({}, as('orgAdmin'));
    const active = await mgmt.getLabelPolicy({}, as('orgAdmin'));
    expect(active).toMatchObject({ isDefault: false, policy: { ...COLOURS, themeMode: ThemeMode.DARK, logoUrl: '' } });
    const branding = await settings().getBrandingSettings({}, as('orgAdmin'));
    expect(branding.settings).toMatchObject({
      resourceOwnerType: ResourceOwnerType.ORG,
      themeMode: ThemeModeV2.DARK, // v2 numbers DARK 3, v1 2
      hideLoginNameSuffix: true,
      lightTheme: { primaryColor: '#112233', warnColor: 'rgb(200, 0, 0)' },
      darkTheme: { primaryColor: 'hsl(210, 50%, 40%)', backgroundColor: '#101010' },
    });
    expect(ThemeModeV2.DARK).not.toBe(ThemeMode.DARK);
    // The login pages' read follows at once.
    const effective = await server.running.gh.directory.orgSettings(server.running.gh.instanceId, MGMT.org);
    expect(effective.branding).toMatchObject({ primaryColor: '#112233', source: 'org' });
    expect(textColourOn(effective.branding.primaryColor)).toBe('#ffffff');

    // A change after activation is again only in the preview.
    await mgmt.updateCustomLabelPolicy({ ...COLOURS, primaryColor: '#ffee00', themeMode: ThemeMode.LIGHT }, as('orgAdmin'));
    expect((await mgmt.getPreviewLabelPolicy({}, as('orgAdmin'))).policy?.primaryColor).toBe('#ffee00');
    expect((await mgmt.getLabelPolicy({}, as('orgAdmin'))).policy?.primaryColor).toBe('#112233');
    expect((await failure(mgmt.updateCustomLabelPolicy({ ...COLOURS, primaryColor: '#ffee00', themeMode: ThemeMode.LIGHT }, as('orgAdmin')))).code).toBe(Code.FailedPrecondition);

    await mgmt.resetLabelPolicyToDefault({}, as('orgAdmin'));
    expect((await mgmt.getLabelPolicy({}, as('orgAdmin'))).isDefault).toBe(true);
    expect((await failure(mgmt.activateCustomLabelPolicy({}, as('orgAdmin')))).code).toBe(Code.NotFound);
    expect((await failure(mgmt.resetLabelPolicyToDefault({}, as('orgAdmin')))).code).toBe(Code.NotFound);
  });

  it('an organization owner adds, changes and resets a login policy', async () => {
    const mgmt = management();
    const inherited = await mgmt.getLoginPolicy({}, as('orgAdmin'));
    expect(inherited).toMatchObject({ isDefault: true, policy: { allowUsernamePassword: true, passwordlessType: PasswordlessType.ALLOWED, allowDomainDiscovery: true } });
    expect(inherited.policy?.passwordCheckLifetime?.seconds).toBe(BigInt(240 * 3600));

    await mgmt.addCustomLoginPolicy({
      allowUsernamePassword: true, allowRegister: false, hidePasswordReset: true, forceMfa: true, passwordlessType: PasswordlessType.NOT_ALLOWED,
      defaultRedirectUri: 'https://app.managed.test/welcome', secondFactors: [SecondFactorType.OTP], mfaInitSkipLifetime: { seconds: 0n, nanos: 0 },
    }, as('orgAdmin'));
    const own = await mgmt.getLoginPolicy({}, as('orgAdmin'));
    expect(own).toMatchObject({
      isDefault: false,
      policy: { allowRegister: false, hidePasswordReset: true, forceMfa: true, passwordlessType: PasswordlessType.NOT_ALLOWED, defaultRedirectUri: 'https://app.managed.test/welcome', secondFactors: [SecondFactorType.OTP] },
    });
    expect(own.policy?.mfaInitSkipLifetime?.seconds).toBe(0n);
    // Durations left out are the instance's.
    expect(own.policy?.secondFactorCheckLifetime?.seconds).toBe(BigInt(18 * 3600));
    expect((await failure(mgmt.addCustomLoginPolicy({ allowUsernamePassword: true }, as('orgAdmin')))).code).toBe(Code.AlreadyExists);

    const login = await settings().getLoginSettings({ ctx: { resourceOwner: { case: 'orgId', value: MGMT.org } } }, as('orgAdmin'));
    expect(login.settings).toMatchObject({ allowRegister: false, forceMfa: true, hidePasswordReset: true, resourceOwnerType: ResourceOwnerType.ORG });
    const effective = await server.running.gh.directory.orgSettings(server.running.gh.instanceId, MGMT.org);
    expect(effective.login).toMatchObject({ forceMfa: true, passwordlessAllowed: false, source: 'org' });

    await mgmt.updateCustomLoginPolicy({ allowUsernamePassword: false, allowRegister: true, passwordlessType: PasswordlessType.ALLOWED }, as('orgAdmin'));
    expect((await mgmt.getLoginPolicy({}, as('orgAdmin'))).policy).toMatchObject({ allowUsernamePassword: false, forceMfa: false, secondFactors: [SecondFactorType.OTP] });

    await mgmt.resetLoginPolicyToDefault({}, as('orgAdmin'));
    expect((await mgmt.getLoginPolicy({}, as('orgAdmin'))).isDefault).toBe(true);
    expect((await failure(mgmt.updateCustomLoginPolicy({ allowUsernamePassword: true }, as('orgAdmin')))).code).toBe(Code.NotFound);
  });

  it('the instance owner changes and activates the instance default', async () => {
    const iam = admin();
    // A colour of its own per transport: each round must change the preview it activates.
    instanceRounds += 1;
    const colour = `#${instanceRounds.toString(16).padStart(2, '0')}aa55`;
    await iam.updateLabelPolicy({ ...COLOURS, primaryColor: colour }, as('iamAdmin'));
    expect((await iam.getPreviewLabelPolicy({}, as('iamAdmin'))).policy?.primaryColor).toBe(colour);
    expect((await iam.getLabelPolicy({}, as('iamAdmin'))).policy?.primaryColor).not.toBe(colour);
    // An organization without branding of its own previews the instance's preview.
    expect((await management().getPreviewLabelPolicy({}, as('orgAdmin'))).policy?.primaryColor).toBe(colour);
    await iam.activateLabelPolicy({}, as('iamAdmin'));
    expect((await iam.getLabelPolicy({}, as('iamAdmin'))).policy).toMatchObject({ primaryColor: colour, isDefault: true });
    // Organizations without their own see it.
    expect((await management().getLabelPolicy({}, as('orgAdmin'))).policy?.primaryColor).toBe(colour);
    expect((await management().getDefaultLabelPolicy({}, as('orgAdmin'))).policy?.primaryColor).toBe(colour);
    expect((await settings().getBrandingSettings({ ctx: { resourceOwner: { case: 'instance', value: true } } }, as('orgAdmin'))).settings?.lightTheme?.primaryColor).toBe(colour);

    const login = await iam.getLoginPolicy({}, as('iamAdmin'));
    const ignore = !login.policy?.ignoreUnknownUsernames;
    const { $typeName: _type, details: _details, isDefault: _default, ...fields } = login.policy!;
    await iam.updateLoginPolicy({ ...fields, ignoreUnknownUsernames: ignore }, as('iamAdmin'));
    expect((await iam.getLoginPolicy({}, as('iamAdmin'))).policy?.ignoreUnknownUsernames).toBe(ignore);
    expect((await management().getDefaultLoginPolicy({}, as('orgAdmin'))).policy?.ignoreUnknownUsernames).toBe(ignore);
  });

  it('the settings reads answer the general, password and lockout settings', async () => {
    const general = await settings().getGeneralSettings({}, as('orgAdmin'));
    expect(general).toMatchObject({ defaultLanguage: 'en', supportedLanguages: ['en', 'de'] });
    const password = await settings().getPasswordComplexitySettings({}, as('orgAdmin'));
    expect(password.settings).toMatchObject({ minLength: 8n, requiresUppercase: true, requiresLowercase: true, requiresNumber: true, requiresSymbol: true });
    const lockout = await settings().getLockoutSettings({}, as('orgAdmin'));
    expect(lockout.settings).toMatchObject({ maxPasswordAttempts: 10n, maxOtpAttempts: 10n });
  });
});

describe('tenants', () => {
  const connect = () => transports(() => server)[2]![1]();
  const mgmt = () => createClient(ManagementService, connect());

  it('an organization owner cannot name another organization', async () => {
    expect((await failure(mgmt().getLabelPolicy({}, as('orgAdmin', MGMT.otherOrg)))).code).toBe(Code.PermissionDenied);
    expect((await failure(mgmt().addCustomLabelPolicy(COLOURS, as('orgAdmin', MGMT.otherOrg)))).code).toBe(Code.PermissionDenied);
    expect((await failure(mgmt().addCustomLoginPolicy({}, as('otherAdmin', MGMT.org)))).code).toBe(Code.PermissionDenied);
    const settings = createClient(SettingsService, connect());
    expect((await failure(settings.getLoginSettings({ ctx: { resourceOwner: { case: 'orgId', value: MGMT.otherOrg } } }, as('orgAdmin')))).code).toBe(Code.PermissionDenied);
    // An id that names nothing gets the same answer as another organization's.
    expect((await failure(mgmt().getLoginPolicy({}, as('orgAdmin', '999999999999999999')))).code).toBe(Code.PermissionDenied);
  });

  it('the instance owner may name any organization, and learns when none has the id', async () => {
    await mgmt().addCustomLabelPolicy(COLOURS, as('iamAdmin', MGMT.otherOrg));
    expect((await mgmt().getPreviewLabelPolicy({}, as('otherAdmin'))).policy?.primaryColor).toBe('#112233');
    await mgmt().resetLabelPolicyToDefault({}, as('otherAdmin'));
    expect((await failure(mgmt().getLoginPolicy({}, as('iamAdmin', '999999999999999999')))).code).toBe(Code.NotFound);
  });

  it('callers without a management role and admin calls by an organization owner are refused', async () => {
    expect((await failure(mgmt().getLabelPolicy({}, as('plain')))).code).toBe(Code.PermissionDenied);
    const admin = createClient(AdminService, connect());
    expect((await failure(admin.updateLabelPolicy(COLOURS, as('orgAdmin')))).code).toBe(Code.PermissionDenied);
    expect((await failure(admin.getLoginPolicy({}, as('orgAdmin')))).code).toBe(Code.PermissionDenied);
    expect((await failure(createClient(SettingsService, connect()).getBrandingSettings({}, as('plain')))).code).toBe(Code.PermissionDenied);
  });
});

describe('bad input', () => {
  const mgmt = () => createClient(ManagementService, transports(() => server)[2]![1]());

  it.each([
    [{ primaryColor: 'red' }, 'primaryColor: must be a colour'],
    [{ warnColorDark: '#fff; background: url(https://evil.example)' }, 'warnColorDark: must be'],
    [{ fontColor: `#${'0'.repeat(55)}` }, 'fontColor: must be at most 50 characters'],
  ])('refuses %j', async (colours, message) => {
    const refused = await failure(mgmt().addCustomLabelPolicy({ ...COLOURS, ...colours }, as('orgAdmin')));
    expect(refused.code).toBe(Code.InvalidArgument);
    expect(refused.message).toContain(message);
  });

  it('refuses a theme mode that has no name', async () => {
    const refused = await failure(mgmt().addCustomLabelPolicy({ ...COLOURS, themeMode: 7 as ThemeMode }, as('orgAdmin')));
    expect(refused).toMatchObject({ code: Code.InvalidArgument });
    expect(refused.message).toContain('themeMode: must be one of THEME_MODE_UNSPECIFIED, THEME_MODE_AUTO, THEME_MODE_DARK, THEME_MODE_LIGHT');
  });

  it.each([
    [{ defaultRedirectUri: 'ftp://files.example/' }, 'defaultRedirectUri: must be an absolute http or https URL'],
    [{ defaultRedirectUri: '/relative' }, 'defaultRedirectUri: must be an absolute http or https URL'],
    [{ passwordCheckLifetime: { seconds: -5n, nanos: 0 } }, 'passwordCheckLifetime: must not be negative'],
    [{ mfaInitSkipLifetime: { seconds: 1n, nanos: 5 } }, 'mfaInitSkipLifetime: must be whole seconds'],
    [{ multiFactorCheckLifetime: { seconds: 400_000_000n, nanos: 0 } }, 'multiFactorCheckLifetime: must be at most 3650 days'],
    [{ secondFactors: [SecondFactorType.UNSPECIFIED] }, 'secondFactors[0]: must be one of SECOND_FACTOR_TYPE_OTP'],
    [{ passwordlessType: 9 as PasswordlessType }, 'passwordlessType: must be one of'],
  ])('refuses the login policy %j', async (fields, message) => {
    const refused = await failure(mgmt().addCustomLoginPolicy({ allowUsernamePassword: true, ...fields }, as('orgAdmin')));
    expect(refused.code).toBe(Code.InvalidArgument);
    expect(refused.message).toContain(message);
  });
});

describe('REST', () => {
  async function call(method: string, path: string, caller: Caller, body?: unknown, orgId?: string) {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...as(caller, orgId).headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, json: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown> };
  }

  it('serves the v1 paths under /management/v1 and /admin/v1 and the v2 reads', async () => {
    expect(await call('POST', '/management/v1/policies/label', 'iamAdmin', { primaryColor: '#abcdef' }, MGMT.otherOrg)).toMatchObject({ status: 200, json: { details: { resourceOwner: MGMT.otherOrg } } });
    // Colours left empty are the instance's.
    const preview = await call('GET', '/management/v1/policies/label/_preview', 'otherAdmin');
    expect(preview).toMatchObject({ status: 200, json: { policy: { primaryColor: '#abcdef' } } });
    expect(preview.json['isDefault']).toBeUndefined(); // false: a zero value, left out as ZITADEL's gateway does
    expect((preview.json['policy'] as Record<string, unknown>)['backgroundColor']).toMatch(/^#/);
    expect((await call('POST', '/management/v1/policies/label/_activate', 'otherAdmin', {})).status).toBe(200);
    expect(await call('GET', `/v2/settings/branding?ctx.orgId=${MGMT.otherOrg}`, 'otherAdmin')).toMatchObject({
      status: 200, json: { settings: { lightTheme: { primaryColor: '#abcdef' }, resourceOwnerType: 'RESOURCE_OWNER_TYPE_ORG', themeMode: 'THEME_MODE_AUTO' } },
    });
    expect((await call('DELETE', '/management/v1/policies/label', 'otherAdmin')).status).toBe(200);
    expect(await call('GET', '/admin/v1/policies/login', 'iamAdmin')).toMatchObject({ status: 200, json: { policy: { allowUsernamePassword: true, passwordCheckLifetime: '864000s' } } });
    expect(await call('GET', '/v2/settings/login?ctx.instance=true', 'orgAdmin')).toMatchObject({ status: 200, json: { settings: { resourceOwnerType: 'RESOURCE_OWNER_TYPE_INSTANCE' } } });
  });

  it('refuses bad values with 400 naming them; unknown fields are ignored as everywhere in the API', async () => {
    const unknown = await call('POST', '/management/v1/policies/login', 'orgAdmin', { allowUsernamePassword: true, allowTeleport: true });
    expect(unknown.status).toBe(200);
    expect((await call('DELETE', '/management/v1/policies/login', 'orgAdmin')).status).toBe(200);
    const colour = await call('PUT', '/admin/v1/policies/label', 'iamAdmin', { primaryColor: 'javascript:alert(1)' });
    expect(colour).toMatchObject({ status: 400 });
    expect(String(colour.json['message'])).toContain('primaryColor: must be a colour');
    const mode = await call('PUT', '/admin/v1/policies/label', 'iamAdmin', { themeMode: 'THEME_MODE_SEPIA' });
    expect(mode.status).toBe(400);
    expect(String(mode.json['message'])).toContain('THEME_MODE_');
  });
});
