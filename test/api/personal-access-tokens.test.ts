/**
 * Personal access tokens (docs/management-api.md#personal-access-tokens) end to end: added, listed
 * and removed with clients built from ZITADEL's own descriptors over the four protocols and REST;
 * presented as a bearer token on every protocol and at introspection; refused at once when removed,
 * expired, or when their machine user is deactivated or deleted. Only the hash is stored.
 */
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code, createClient, type Client } from '@connectrpc/connect';
import { TimestampFilterMethod } from '@zitadel/proto/zitadel/filter/v2/filter_pb.js';
import { OrganizationService } from '@zitadel/proto/zitadel/org/v2/org_service_pb.js';
import { PersonalAccessTokenFieldName } from '@zitadel/proto/zitadel/user/v2/pat_pb.js';
import { UserService } from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import { sha256 } from '../../src/domain/kernel/crypto.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm } from '../support/http.ts';
import { apiTokens, failure, managementDocument, MGMT, rest, transports, withToken, type Caller } from '../support/management.ts';

/** Machine users that get tokens: one per protocol, one for the REST story, one for removals. */
const ROBOTS = {
  rest: '231000000000000001',
  lifecycle: '231000000000000002',
  other: '231000000000000003',
} as const;
const perTransport = (i: number) => `23200000000000000${i}`;
const INTROSPECTOR = { clientId: 'portal-api', secret: 'portal-api-secret' };
const inDays = (days: number) => timestampFromDate(new Date(Date.now() + days * 86_400_000));

let server: TestServer;
let tokens: Record<Caller, string>;

beforeAll(async () => {
  server = await startTestServer(
    managementDocument({
      machines: [
        { id: ROBOTS.rest, userName: 'pat-rest', roles: ['ORG_OWNER'] },
        { id: ROBOTS.lifecycle, userName: 'pat-lifecycle', roles: ['ORG_OWNER'] },
        { id: ROBOTS.other, userName: 'pat-other' },
        ...[0, 1, 2, 3].map((i) => ({ id: perTransport(i), userName: `pat-transport-${i}`, roles: ['ORG_OWNER'] })),
      ],
    }),
  );
  tokens = await apiTokens(server);
});

afterAll(async () => {
  await server?.stop();
});

async function introspect(token: string): Promise<Record<string, unknown>> {
  const reply = await postForm(`${server.url}/oauth/v2/introspect`, { token }, { authorization: basic(INTROSPECTOR.clientId, INTROSPECTOR.secret) });
  expect(reply.status).toBe(200);
  return reply.json;
}

/** The status of a REST call the token authorizes (the organizations the caller may see). */
async function restStatus(token: string): Promise<number> {
  return (await rest(server, 'POST', '/v2/organizations/_search', token, {})).status;
}

describe.each(transports(() => server))('over %s', (_name, transport) => {
  const index = transports(() => server).findIndex(([name]) => name === _name);
  let users: Client<typeof UserService>;
  let orgs: Client<typeof OrganizationService>;
  beforeAll(() => {
    users = createClient(UserService, transport());
    orgs = createClient(OrganizationService, transport());
  });

  it('an administrator adds a token, which then authorizes its machine user on this protocol, and removes it', async () => {
    const userId = perTransport(index);
    const added = await users.addPersonalAccessToken({ userId, expirationDate: inDays(30) }, withToken(tokens.iamAdmin));
    expect(added.token).toMatch(/^gatehouse_pat_[A-Za-z0-9_-]{43}$/);
    expect(added.tokenId).toMatch(/^\d+$/);
    expect(added.creationDate).toBeDefined();

    const listed = await orgs.listOrganizations({}, withToken(added.token));
    expect(listed.result.map((org) => org.id)).toEqual([MGMT.org]);

    const found = await users.listPersonalAccessTokens({ filters: [{ filter: { case: 'userIdFilter', value: { id: userId } } }] }, withToken(tokens.orgAdmin));
    expect(found.result).toEqual([expect.objectContaining({ id: added.tokenId, userId, organizationId: MGMT.org })]);
    expect(found.pagination?.totalResult).toBe(1n);

    const removed = await users.removePersonalAccessToken({ userId, tokenId: added.tokenId }, withToken(tokens.iamAdmin));
    expect(removed.deletionDate).toBeDefined();
    expect((await failure(orgs.listOrganizations({}, withToken(added.token)))).code).toBe(Code.Unauthenticated);
  });
});

describe('personal access tokens', () => {
  it('REST: added at ZITADEL\'s path, used as a bearer token, introspected, listed and removed', async () => {
    const added = await rest(server, 'POST', `/v2/users/${ROBOTS.rest}/pats`, tokens.orgAdmin, { expirationDate: '2519-04-01T08:45:00Z' });
    expect(added.status).toBe(200);
    const token = String(added.json['token']);
    const tokenId = String(added.json['tokenId']);
    expect(await restStatus(token)).toBe(200);

    // Any application of the instance may introspect it, as ZITADEL's introspection does.
    const introspected = await introspect(token);
    expect(introspected).toMatchObject({ active: true, sub: ROBOTS.rest, client_id: ROBOTS.rest, username: 'pat-rest@managed.test', token_type: 'Bearer', jti: tokenId });
    expect(introspected['aud']).toEqual(expect.arrayContaining([server.url, INTROSPECTOR.clientId]));
    expect(introspected['exp']).toBe(Date.UTC(2519, 3, 1, 8, 45) / 1000);

    // userinfo answers for the machine user (the token carries openid and profile).
    const userinfo = await fetch(`${server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${token}` } });
    expect(userinfo.status).toBe(200);
    expect(await userinfo.json()).toMatchObject({ sub: ROBOTS.rest });

    const listed = await rest(server, 'POST', '/v2/users/pats/search', tokens.iamAdmin, {
      filters: [{ tokenIdFilter: { id: tokenId } }],
    });
    expect(listed.status).toBe(200);
    expect(listed.json).toMatchObject({ pagination: { totalResult: '1' }, result: [{ id: tokenId, userId: ROBOTS.rest, organizationId: MGMT.org, expirationDate: '2519-04-01T08:45:00Z' }] });

    const removed = await rest(server, 'DELETE', `/v2/users/${ROBOTS.rest}/pats/${tokenId}`, tokens.orgAdmin);
    expect(removed.status).toBe(200);
    expect(await restStatus(token)).toBe(401);
    expect(await introspect(token)).toEqual({ active: false });
    expect((await rest(server, 'DELETE', `/v2/users/${ROBOTS.rest}/pats/${tokenId}`, tokens.orgAdmin)).status).toBe(404);
  });

  it('keeps only the hash of the token', async () => {
    const added = await rest(server, 'POST', `/v2/users/${ROBOTS.other}/pats`, tokens.iamAdmin, { expirationDate: '2100-01-01T00:00:00Z' });
    const row = await server.running.gh.db.selectFrom('personal_access_tokens').selectAll().where('id', '=', String(added.json['tokenId'])).executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(sha256(String(added.json['token'])));
    expect(JSON.stringify(row)).not.toContain(String(added.json['token']).slice('gatehouse_pat_'.length));
  });

  it('is refused once expired, also after it was used (and cached)', async () => {
    const soon = new Date(Date.now() + 2_000);
    const added = await rest(server, 'POST', `/v2/users/${ROBOTS.lifecycle}/pats`, tokens.iamAdmin, { expirationDate: soon.toISOString() });
    expect(added.status).toBe(200);
    const token = String(added.json['token']);
    expect(await restStatus(token)).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, soon.getTime() - Date.now() + 100));
    expect(await restStatus(token)).toBe(401);
    expect(await introspect(token)).toEqual({ active: false });
  });

  it('follows its machine user: refused while deactivated, valid again once reactivated, gone with the user', async () => {
    const added = await rest(server, 'POST', `/v2/users/${ROBOTS.lifecycle}/pats`, tokens.iamAdmin, { expirationDate: '2100-01-01T00:00:00Z' });
    const token = String(added.json['token']);
    expect(await restStatus(token)).toBe(200);
    expect((await rest(server, 'POST', `/v2/users/${ROBOTS.lifecycle}/deactivate`, tokens.iamAdmin, {})).status).toBe(200);
    expect(await restStatus(token)).toBe(401);
    expect((await rest(server, 'POST', `/v2/users/${ROBOTS.lifecycle}/reactivate`, tokens.iamAdmin, {})).status).toBe(200);
    expect(await restStatus(token)).toBe(200);
    expect((await rest(server, 'DELETE', `/v2/users/${ROBOTS.lifecycle}`, tokens.iamAdmin)).status).toBe(200);
    expect(await restStatus(token)).toBe(401);
    expect(await introspect(token)).toEqual({ active: false });
  });

  it('refuses what ZITADEL refuses: no expiry, a past expiry, a human user, an unknown user or token', async () => {
    const noExpiry = await rest(server, 'POST', `/v2/users/${ROBOTS.other}/pats`, tokens.iamAdmin, {});
    expect(noExpiry.status).toBe(400);
    expect(noExpiry.json['message']).toContain('expirationDate: is required');
    const past = await rest(server, 'POST', `/v2/users/${ROBOTS.other}/pats`, tokens.iamAdmin, { expirationDate: '2020-01-01T00:00:00Z' });
    expect(past.status).toBe(400);
    expect(past.json['message']).toContain('expirationDate: must lie in the future');
    const farAway = await rest(server, 'POST', `/v2/users/${ROBOTS.other}/pats`, tokens.iamAdmin, { expirationDate: '10000-01-01T00:00:00Z' });
    expect(farAway.status).toBe(400);
    const human = await rest(server, 'POST', `/v2/users/${MGMT.alice}/pats`, tokens.iamAdmin, { expirationDate: '2100-01-01T00:00:00Z' });
    expect(human.status).toBe(400);
    expect(human.json['message']).toContain('only machine users have keys, secrets and personal access tokens');
    expect((await rest(server, 'POST', '/v2/users/299999999999999999/pats', tokens.iamAdmin, { expirationDate: '2100-01-01T00:00:00Z' })).status).toBe(404);
    expect((await rest(server, 'DELETE', `/v2/users/${ROBOTS.other}/pats/299999999999999999`, tokens.iamAdmin)).status).toBe(404);
    expect((await rest(server, 'DELETE', `/v2/users/${ROBOTS.other}/pats/%20`, tokens.iamAdmin)).status).toBe(404);
  });

  it('is managed only by administrators of the machine user, and listed only within their reach', async () => {
    const added = await rest(server, 'POST', `/v2/users/${ROBOTS.other}/pats`, tokens.iamAdmin, { expirationDate: '2100-01-01T00:00:00Z' });
    const tokenId = String(added.json['tokenId']);
    // Another organization's owner and a caller without a role: the same refusal as for a user they may not see.
    for (const caller of ['otherAdmin', 'plain'] as const) {
      expect((await rest(server, 'POST', `/v2/users/${ROBOTS.other}/pats`, tokens[caller], { expirationDate: '2100-01-01T00:00:00Z' })).status).toBe(403);
      expect((await rest(server, 'DELETE', `/v2/users/${ROBOTS.other}/pats/${tokenId}`, tokens[caller])).status).toBe(403);
    }
    const elsewhere = await rest(server, 'POST', '/v2/users/pats/search', tokens.otherAdmin, {});
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.json['result'] ?? []).toEqual([]);
    expect((await rest(server, 'POST', '/v2/users/pats/search', tokens.plain, {})).status).toBe(403);
    // A machine user's own token does not make it the administrator of its own tokens.
    const own = await rest(server, 'POST', `/v2/users/${ROBOTS.other}/pats`, String(added.json['token']), { expirationDate: '2100-01-01T00:00:00Z' });
    expect(own.status).toBe(403);
  });

  it('lists with ZITADEL\'s filters, sorting and paging, and refuses bad filters', async () => {
    const client = createClient(UserService, transports(() => server)[2]![1]());
    const made: string[] = [];
    for (const days of [10, 20, 30]) {
      made.push((await client.addPersonalAccessToken({ userId: ROBOTS.other, expirationDate: inDays(days) }, withToken(tokens.iamAdmin))).tokenId);
    }
    const byExpiry = await client.listPersonalAccessTokens(
      {
        sortingColumn: PersonalAccessTokenFieldName.EXPIRATION_DATE,
        pagination: { asc: true, limit: 2 },
        filters: [
          { filter: { case: 'userIdFilter', value: { id: ROBOTS.other } } },
          { filter: { case: 'expirationDateFilter', value: { timestamp: inDays(5), method: TimestampFilterMethod.AFTER } } },
          { filter: { case: 'expirationDateFilter', value: { timestamp: inDays(40), method: TimestampFilterMethod.BEFORE } } },
        ],
      },
      withToken(tokens.orgAdmin),
    );
    expect(byExpiry.result.map((pat) => pat.id)).toEqual(made.slice(0, 2));
    expect(byExpiry.pagination).toMatchObject({ totalResult: 3n, appliedLimit: 2n });

    const badMethod = await rest(server, 'POST', '/v2/users/pats/search', tokens.iamAdmin, { filters: [{ createdDateFilter: {} }] });
    expect(badMethod.status).toBe(400);
    expect(badMethod.json['message']).toContain('filters[0].createdDateFilter.timestamp: is required');
    const badSort = await failure(client.listPersonalAccessTokens({ sortingColumn: 99 as PersonalAccessTokenFieldName }, withToken(tokens.iamAdmin)));
    expect(badSort.code).toBe(Code.InvalidArgument);
  });

  it('is not a token of the revocation endpoint: it is removed through the API', async () => {
    const added = await rest(server, 'POST', `/v2/users/${ROBOTS.rest}/pats`, tokens.iamAdmin, { expirationDate: '2100-01-01T00:00:00Z' });
    const token = String(added.json['token']);
    const revoked = await postForm(`${server.url}/oauth/v2/revoke`, { token }, { authorization: basic(INTROSPECTOR.clientId, INTROSPECTOR.secret) });
    expect(revoked.status).toBe(200);
    expect(await restStatus(token)).toBe(200);
  });

  it('a forged token of the right shape is refused without a hint', async () => {
    const forged = `gatehouse_pat_${'A'.repeat(43)}`;
    const reply = await rest(server, 'POST', '/v2/organizations/_search', forged, {});
    expect(reply.status).toBe(401);
    expect(reply.json['message']).toBe('invalid or expired token');
  });
});
