/** Bootstrap validation: strict, before any database work, every problem named by file, path and cause. */
import { stringify } from 'yaml';
import { parseBootstrap, readBootstrapFile, validateBootstrap } from '../../src/bootstrap/schema.ts';
import { bootstrapProblems } from '../support/bootstrap-problems.ts';
import { fixture } from '../support/fixtures.ts';
import { rsaKeyPair } from '../support/key-pool.ts';
import { exampleYaml, minimalDocument, rsaKey } from './example.ts';

const FILE = 'bad.yaml';
const key = rsaKey();
const APP = 'orgs[0].projects[0].apps[0]';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test documents are edited freely

function broken(edit: (doc: Doc) => void): string {
  const doc = minimalDocument(key.publicPem) as Doc;
  edit(doc);
  return stringify(doc);
}

const problems = (text: string, file = FILE) => bootstrapProblems(text, file);

const web = (doc: Doc) => doc['orgs'][0].projects[0].apps[0];
const api = (doc: Doc) => doc['orgs'][0].projects[0].apps[1];

describe('bootstrap validation', () => {
  it('accepts the example file shape', () => {
    const { document } = parseBootstrap(exampleYaml().yaml, 'example.yaml');
    expect(document.orgs[0]?.projects[0]?.apps.map((app) => app.clientId)).toEqual(['shop-web', 'shop-spa', 'shop-api', 'shop-backend', 'shop-portal']);
    expect(document.orgs[0]?.projects[0]?.apps[2]).toMatchObject({ type: 'api', responseTypes: [], grantTypes: [] });
    expect(document.features).toEqual({ oidcTokenExchange: true });
    expect(document.orgs[0]?.allowRegister).toBe(true);
  });

  it('reads allowRegister per organization, left out meaning the default (docs/security.md 10.12)', () => {
    const { document } = parseBootstrap(
      broken((doc) => doc['orgs'].push({ name: 'Other', domain: 'other.test', allowRegister: false })),
      FILE,
    );
    expect(document.orgs.map((org) => org.allowRegister)).toEqual([undefined, false]);
  });

  it('accepts JSON as well as YAML', () => {
    const { document } = parseBootstrap(JSON.stringify(minimalDocument(key.publicPem)), 'bootstrap.json');
    expect(document.orgs[0]?.name).toBe('ACME');
  });

  it('accepts the document the OAuth suites start with', () => {
    expect(() => validateBootstrap(fixture().document, 'fixtures.ts')).not.toThrow();
  });

  it('allows plain http to other hosts only in dev mode', () => {
    const text = broken((doc) => {
      web(doc).redirectUris = ['http://shop.internal/cb'];
      web(doc).devMode = true;
    });
    expect(() => parseBootstrap(text, FILE)).not.toThrow();
  });

  it('lets a native application register a private-use scheme and loopback URIs, and reads appType', () => {
    const { document } = parseBootstrap(
      broken((doc) => {
        web(doc).appType = 'native';
        web(doc).redirectUris = ['com.example.app:/cb', 'http://127.0.0.1/cb', 'http://[::1]/cb'];
        web(doc).postLogoutRedirectUris = ['com.example.app:/signed-out', 'http://127.0.0.1/signed-out'];
      }),
      FILE,
    );
    expect(document.orgs[0]?.projects[0]?.apps.map((app) => app.appType)).toEqual(['native', 'web']);
    expect(document.orgs[0]?.projects[0]?.apps[0]?.redirectUris).toEqual(['com.example.app:/cb', 'http://127.0.0.1/cb', 'http://[::1]/cb']);
  });

  const privatePem = rsaKeyPair().privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

  it.each<[string, (doc: Doc) => void, string, RegExp]>([
    ['an unknown top-level key', (doc) => (doc['orgz'] = []), 'orgz', /unknown key \(did you mean "orgs"\?\)/],
    ['an unknown app key', (doc) => (web(doc).redirectUri = 'https://a.test/cb'), `${APP}.redirectUri`, /unknown key \(did you mean "redirectUris"\?\)/],
    ['an unknown feature', (doc) => (doc['features'].tokenExchange = true), 'features.tokenExchange', /unknown key \(did you mean "oidcTokenExchange"\?\); allowed keys: oidcTokenExchange/],
    ['a bad authMethod', (doc) => (web(doc).authMethod = 'client_secret_jwt'), `${APP}.authMethod`, /must be one of "client_secret_basic", .*got the string "client_secret_jwt"/],
    ['a bad response type', (doc) => (web(doc).responseTypes = ['token']), `${APP}.responseTypes[0]`, /must be one of "code", "id_token", "id_token token"/],
    ['a bad grant type', (doc) => (web(doc).grantTypes = ['authorization_code', 'password']), `${APP}.grantTypes[1]`, /must be one of "authorization_code"/],
    ['a bad accessTokenType', (doc) => (web(doc).accessTokenType = 'bearer'), `${APP}.accessTokenType`, /must be one of "jwt", "opaque"/],
    ['a bad role', (doc) => (doc['orgs'][0].users[0].roles = ['ORG_OWNER', 'ADMIN']), 'orgs[0].users[0].roles[1]', /must be one of "IAM_OWNER"/],
    ['a repeated role', (doc) => (doc['orgs'][0].users[0].roles = ['ORG_OWNER', 'ORG_OWNER']), 'orgs[0].users[0].roles[1]', /duplicates orgs\[0\]\.users\[0\]\.roles\[0\]/],
    ['a bad app type', (doc) => (api(doc).type = 'resource'), 'orgs[0].projects[0].apps[1].type', /must be one of "oidc", "api"/],
    ['a relative redirect URI', (doc) => (web(doc).redirectUris = ['/callback']), `${APP}.redirectUris[0]`, /must be an absolute URI/],
    ['plain http to another host', (doc) => (web(doc).redirectUris = ['http://shop.example/cb']), `${APP}.redirectUris[0]`, /must use https; http is only allowed for localhost/],
    ['a "*" in a redirect URI', (doc) => (web(doc).redirectUris = ['https://*.evil.example/cb']), `${APP}.redirectUris[0]`, /must not contain "\*"/],
    ['user information in a redirect URI', (doc) => (web(doc).redirectUris = ['https://user:pw@shop.example/cb']), `${APP}.redirectUris[0]`, /must not contain user information/],
    ['user information in a post-logout URI', (doc) => (web(doc).postLogoutRedirectUris = ['https://user@shop.example/']), `${APP}.postLogoutRedirectUris[0]`, /must not contain user information/],
    ['a private-use scheme on a web application', (doc) => (web(doc).redirectUris = ['com.example.app:/cb']), `${APP}.redirectUris[0]`, /needs appType native/],
    ['a scheme that is no reverse domain name', (doc) => {
      web(doc).appType = 'native';
      web(doc).redirectUris = ['javascript:alert(1)//'];
    }, `${APP}.redirectUris[0]`, /private-use scheme named by a reverse domain name/],
    ['a bad appType', (doc) => (web(doc).appType = 'desktop'), `${APP}.appType`, /must be one of "web", "user_agent", "native"/],
    ['appType on an API app', (doc) => (api(doc).appType = 'native'), 'orgs[0].projects[0].apps[1].appType', /is not allowed for type: api/],
    ['a redirect URI with a fragment', (doc) => (web(doc).redirectUris = ['https://shop.example/cb#x']), `${APP}.redirectUris[0]`, /must not contain a fragment/],
    ['a custom scheme', (doc) => (web(doc).postLogoutRedirectUris = ['myapp://done']), `${APP}.postLogoutRedirectUris[0]`, /must use https \(or http for localhost\); a private-use scheme/],
    ['a PEM that does not parse', (doc) => (doc['orgs'][0].machines[0].publicKeys[0].pem = '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n'), 'orgs[0].machines[0].publicKeys[0].pem', /is not a valid PEM public key/],
    ['a private key instead of a public one', (doc) => (doc['orgs'][0].machines[0].publicKeys[0].pem = privatePem), 'orgs[0].machines[0].publicKeys[0].pem', /is a private key; give the public key/],
    ['a missing clientSecret', (doc) => delete web(doc).clientSecret, `${APP}.clientSecret`, /is required for authMethod client_secret_basic/],
    ['a clientSecret on a public client', (doc) => (web(doc).authMethod = 'none'), `${APP}.clientSecret`, /is not allowed for authMethod none/],
    ['private_key_jwt without keys', (doc) => {
      web(doc).authMethod = 'private_key_jwt';
      delete web(doc).clientSecret;
    }, `${APP}.publicKeys`, /is required for authMethod private_key_jwt/],
    ['a missing authMethod', (doc) => delete web(doc).authMethod, `${APP}.authMethod`, /is required \(one of "client_secret_basic"/],
    ['a missing clientId', (doc) => delete web(doc).clientId, `${APP}.clientId`, /is required/],
    ['a duplicate client id', (doc) => (api(doc).clientId = 'shop-web'), 'orgs[0].projects[0].apps[1].clientId', /clientId "shop-web" is already used at orgs\[0\]\.projects\[0\]\.apps\[0\]\.clientId/],
    ['a duplicate org name', (doc) => doc['orgs'].push({ name: 'acme', domain: 'other.test' }), 'orgs[1].name', /organization name "acme" is already used at orgs\[0\]\.name/],
    ['a duplicate user name', (doc) => doc['orgs'][0].users.push({ userName: 'Reporter' }), 'orgs[0].machines[0].userName', /user name "reporter" \(in this organization\) is already used at orgs\[0\]\.users\[1\]\.userName/],
    ['a machine name used as a client id', (doc) => (api(doc).clientId = 'reporter'), 'orgs[0].projects[0].apps[1].clientId', /is the user name of the machine user at orgs\[0\]\.machines\[0\]\.userName/],
    ['a string for a boolean', (doc) => (doc['orgs'][0].users[0].emailVerified = 'yes'), 'orgs[0].users[0].emailVerified', /must be true or false, got the string "yes"/],
    ['a number for an id', (doc) => (doc['orgs'][0].id = 100000000000000001), 'orgs[0].id', /must be a string, got the number .* \(quote identifiers/],
    ['flows on an API app', (doc) => (api(doc).redirectUris = ['https://a.test/cb']), 'orgs[0].projects[0].apps[1].redirectUris', /is not allowed for type: api/],
    ['code without authorization_code', (doc) => (web(doc).grantTypes = ['refresh_token']), `${APP}.responseTypes[0]`, /response type "code" needs grant type "authorization_code"/],
    ['a missing org domain', (doc) => delete doc['orgs'][0].domain, 'orgs[0].domain', /is required/],
    ['a string for allowRegister', (doc) => (doc['orgs'][0].allowRegister = 'no'), 'orgs[0].allowRegister', /must be true or false, got the string "no"/],
    ['a misspelt allowRegister', (doc) => (doc['orgs'][0].allowRegsiter = false), 'orgs[0].allowRegsiter', /unknown key \(did you mean "allowRegister"\?\)/],
  ])('rejects %s', (_label, edit, path, problem) => {
    const error = problems(broken(edit));
    const line = error.message.split('\n').find((entry) => entry.includes(`${FILE}: ${path}: `));
    expect(line).toBeDefined();
    expect(line).toMatch(problem);
    expect(error.issues.some((issue) => issue.file === FILE && issue.path === path && problem.test(issue.message))).toBe(true);
  });

  it('reports every problem, not only the first', () => {
    const error = problems(
      broken((doc) => {
        doc['orgs'][0].users[0].roles = ['ADMIN'];
        web(doc).redirectUris = ['ftp://x/cb'];
        api(doc).authMethod = 'none';
      }),
    );
    expect(error.issues.map((issue) => issue.path)).toEqual([
      'orgs[0].users[0].roles[0]',
      `${APP}.redirectUris[0]`,
      'orgs[0].projects[0].apps[1].clientSecret',
      'orgs[0].projects[0].apps[1].authMethod',
    ]);
    expect(error.message).toMatch(/^bootstrap failed, 4 problems:\n {2}- bad\.yaml: orgs\[0\]\.users\[0\]\.roles\[0\]: /);
  });

  it('names the line of a syntax error and of a repeated key', () => {
    const error = problems('orgs:\n  - name: ACME\n    name: Other\n    domain: acme.test\n', 'dup.yaml');
    expect(error.message).toContain('dup.yaml: line 3, column 5: Map keys must be unique');
    expect(problems('orgs: [\n', 'broken.json').issues[0]?.path).toMatch(/^line \d+, column \d+$/);
  });

  it('rejects a document that is not a mapping', () => {
    expect(problems('- just\n- a list\n').message).toContain('bad.yaml: must be a mapping, got a list');
  });

  it('names a file that does not exist', async () => {
    await expect(readBootstrapFile('/nonexistent/bootstrap.yaml')).rejects.toThrow('/nonexistent/bootstrap.yaml: no such file');
  });
});
