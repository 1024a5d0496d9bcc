/**
 * The management API's story, end to end, with ZITADEL's own clients: `@zitadel/client`
 * (its gRPC server transport and v2 service clients), `@zitadel/proto` descriptors over Connect and
 * gRPC-web, and `@grpc/grpc-js` over gRPC with the same descriptors. An IAM_OWNER creates an
 * organization, a project with a role, an OIDC web application and a human user, and gives the user
 * the role; the user signs in through the new application in Chromium and its tokens carry the
 * role. A machine user created through the API gets a key and uses the JWT profile grant, gets a
 * secret and uses client_credentials; the secret is removed and the next request is invalid_client.
 * The user is deactivated and its tokens die at once.
 */
import { createPrivateKey } from 'node:crypto';
import http from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { create, fromBinary, toBinary, type DescMessage, type DescMethodUnary, type MessageInitShape, type MessageShape } from '@bufbuild/protobuf';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { AppService } from '@zitadel/proto/zitadel/app/v2beta/app_service_pb.js';
import { OIDCAppType, OIDCAuthMethodType, OIDCGrantType, OIDCResponseType, OIDCTokenType } from '@zitadel/proto/zitadel/app/v2beta/oidc_pb.js';
import { APIAuthMethodType } from '@zitadel/proto/zitadel/app/v2beta/api_pb.js';
import { AuthorizationService } from '@zitadel/proto/zitadel/authorization/v2beta/authorization_service_pb.js';
import { OrganizationService } from '@zitadel/proto/zitadel/org/v2/org_service_pb.js';
import { ProjectService } from '@zitadel/proto/zitadel/project/v2beta/project_service_pb.js';
import { UserService } from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import { createServerTransport } from '@zitadel/client/node';
import { createOrganizationServiceClient, createUserServiceClient } from '@zitadel/client/v2';
import { decodeJwt } from 'jose';
import * as client from 'openid-client';
import type { Browser } from 'playwright-core';
import { signAssertion } from '../support/assertions.ts';
import { describeWithChromium, launchChromium } from '../support/chromium.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm } from '../support/http.ts';
import { apiToken, managementDocument, withToken } from '../support/management.ts';
import { freePort } from '../support/ports.ts';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const ROLES_CLAIM = 'urn:gatehouse:iam:org:project:roles';

/** A unary call through @grpc/grpc-js, messages encoded with ZITADEL's descriptors. */
function grpcUnary<I extends DescMessage, O extends DescMessage>(
  address: string,
  method: DescMethodUnary<I, O>,
  request: MessageInitShape<I>,
  token: string,
): Promise<MessageShape<O>> {
  const channel = new grpc.Client(address, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return new Promise((resolve, reject) => {
    channel.makeUnaryRequest<MessageShape<I>, MessageShape<O>>(
      `/${method.parent.typeName}/${method.name}`,
      (message) => Buffer.from(toBinary(method.input, message)),
      (bytes) => fromBinary(method.output, bytes),
      create(method.input, request),
      metadata,
      (error: grpc.ServiceError | null, value?: MessageShape<O>) => {
        channel.close();
        if (error !== null || value === undefined) reject(error ?? new Error('no answer'));
        else resolve(value);
      },
    );
  });
}

describeWithChromium('the management story', () => {
  let server: TestServer;
  let browser: Browser;
  let rp: http.Server;
  let rpBase: string;
  let admin: string;

  beforeAll(async () => {
    const rpPort = await freePort();
    rpBase = `http://127.0.0.1:${rpPort}`;
    rp = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>RP</title><p>signed in</p>'));
    await new Promise<void>((resolve) => rp.listen(rpPort, '127.0.0.1', resolve));
    server = await startTestServer(managementDocument());
    admin = await apiToken(server, 'iamAdmin');
    browser = await launchChromium();
  }, 60000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await new Promise((resolve) => rp?.close(resolve));
  });

  it('from an empty organization to a signed-in user with roles, a machine with a key and a secret, and a deactivation', async () => {
    const connect = createConnectTransport({ baseUrl: server.url, httpVersion: '1.1' });
    const grpcWeb = createGrpcWebTransport({ baseUrl: server.url, httpVersion: '1.1' });
    const address = new URL(server.url).host;
    const auth = withToken(admin);

    // gRPC (@grpc/grpc-js): the organization
    const org = await grpcUnary(address, OrganizationService.method.addOrganization, { name: 'Story' }, admin);
    const orgId = org.organizationId;

    // Connect: the project and its role
    const projects = createClient(ProjectService, connect);
    const project = await projects.createProject({ organizationId: orgId, name: 'story', projectRoleAssertion: true }, auth);
    await projects.addProjectRole({ projectId: project.id, roleKey: 'member', displayName: 'Member' }, auth);

    // gRPC-web: the OIDC web application and an API application for introspection
    const apps = createClient(AppService, grpcWeb);
    const web = await apps.createApplication({
      projectId: project.id,
      name: 'story-web',
      creationRequestType: {
        case: 'oidcRequest',
        value: {
          redirectUris: [`${rpBase}/callback`],
          responseTypes: [OIDCResponseType.OIDC_RESPONSE_TYPE_CODE],
          grantTypes: [OIDCGrantType.OIDC_GRANT_TYPE_AUTHORIZATION_CODE, OIDCGrantType.OIDC_GRANT_TYPE_REFRESH_TOKEN],
          appType: OIDCAppType.OIDC_APP_TYPE_WEB,
          authMethodType: OIDCAuthMethodType.OIDC_AUTH_METHOD_TYPE_BASIC,
          accessTokenType: OIDCTokenType.OIDC_TOKEN_TYPE_JWT,
          idTokenRoleAssertion: true,
          accessTokenRoleAssertion: true,
          devMode: true,
        },
      },
    }, auth);
    if (web.creationResponseType.case !== 'oidcResponse') throw new Error('no OIDC response');
    const { clientId, clientSecret } = web.creationResponseType.value;
    const api = await apps.createApplication({ projectId: project.id, name: 'story-api', creationRequestType: { case: 'apiRequest', value: { authMethodType: APIAuthMethodType.API_AUTH_METHOD_TYPE_BASIC } } }, auth);
    if (api.creationResponseType.case !== 'apiResponse') throw new Error('no API response');
    const introspector = api.creationResponseType.value;

    // @zitadel/client: the organization is listed, and later the user read back
    const zitadel = createServerTransport(admin, { baseUrl: server.url });
    const listed = await createOrganizationServiceClient(zitadel).listOrganizations({ queries: [{ query: { case: 'idQuery', value: { id: orgId } } }] });
    expect(listed.result.map((o) => o.primaryDomain)).toEqual(['story.127.0.0.1']);

    // Connect: the human user and its role
    const users = createClient(UserService, connect);
    const human = await users.addHumanUser({
      organization: { org: { case: 'orgId', value: orgId } },
      username: 'sam',
      profile: { givenName: 'Sam', familyName: 'Story' },
      email: { email: 'sam@story.test', verification: { case: 'isVerified', value: true } },
      passwordType: { case: 'password', value: { password: 'Correct-Horse-9', changeRequired: false } },
    }, auth);
    await createClient(AuthorizationService, connect).createAuthorization({ userId: human.userId, projectId: project.id, roleKeys: ['member'] }, auth);
    const read = await createUserServiceClient(zitadel).getUserByID({ userId: human.userId });
    expect(read.user).toMatchObject({ userId: human.userId, username: 'sam', preferredLoginName: 'sam@story.127.0.0.1' });

    // Chromium: the user signs in through the new application
    const config = await client.discovery(new URL(server.url), clientId, undefined, client.ClientSecretBasic(clientSecret), { execute: [client.allowInsecureRequests] });
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: `${rpBase}/callback`, scope: 'openid profile offline_access', state });
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    await page.goto(url.href);
    await page.fill('input[name="loginName"]', 'sam@story.127.0.0.1');
    await page.click('button[type="submit"].primary');
    await page.fill('input[name="password"]', 'Correct-Horse-9');
    await page.click('button[type="submit"].primary');
    await page.waitForURL(`${rpBase}/callback**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), { expectedState: state });
    await context.close();
    expect(tokens.refresh_token).toEqual(expect.any(String));
    const member = { member: { [orgId]: 'story.127.0.0.1' } };
    expect(tokens.claims()![ROLES_CLAIM]).toEqual(member);
    expect(decodeJwt(tokens.access_token)[ROLES_CLAIM]).toEqual(member);

    // A machine user: a generated key for the JWT profile grant, a secret for client_credentials
    const machine = await users.createUser({ organizationId: orgId, username: 'story-bot', userType: { case: 'machine', value: { name: 'Story bot' } } }, auth);
    const key = await users.addKey({ userId: machine.id }, auth);
    const keyFile = JSON.parse(Buffer.from(key.keyContent).toString('utf8')) as { keyId: string; key: string; userId: string };
    expect(keyFile).toMatchObject({ type: 'serviceaccount', keyId: key.keyId, userId: machine.id });
    const assertion = await signAssertion({ issuer: machine.id, audience: server.url, key: createPrivateKey(keyFile.key), kid: keyFile.keyId });
    const profile = await postForm(`${server.url}/oauth/v2/token`, { grant_type: JWT_BEARER, assertion, scope: 'openid' });
    expect(profile.status).toBe(200);
    const secret = await users.addSecret({ userId: machine.id }, auth);
    const credentials = { grant_type: 'client_credentials', scope: 'openid' };
    expect((await postForm(`${server.url}/oauth/v2/token`, credentials, { authorization: basic('story-bot', secret.clientSecret) })).status).toBe(200);
    await users.removeSecret({ userId: machine.id }, auth);
    const refused = await postForm(`${server.url}/oauth/v2/token`, credentials, { authorization: basic('story-bot', secret.clientSecret) });
    expect(refused.status).toBe(401);
    expect(refused.json['error']).toBe('invalid_client');

    // The user is deactivated: its tokens die at once
    const introspect = (token: string) => postForm(`${server.url}/oauth/v2/introspect`, { token }, { authorization: basic(introspector.clientId, introspector.clientSecret) });
    expect((await introspect(tokens.access_token)).json['active']).toBe(true);
    await users.deactivateUser({ userId: human.userId }, auth);
    expect((await introspect(tokens.access_token)).json).toEqual({ active: false });
    const refresh = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }, { authorization: basic(clientId, clientSecret) });
    expect(refresh.json['error']).toBe('invalid_grant');
    await users.reactivateUser({ userId: human.userId }, auth);
    expect((await introspect(tokens.access_token)).json).toEqual({ active: false });
  }, 90000);
});
