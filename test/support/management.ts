/**
 * What the management API suites share (docs/management-api.md): a bootstrap with callers of every
 * permission level, tokens from the real token endpoint, and the four protocols as real transports.
 * Clients are built from ZITADEL's own descriptors (`@zitadel/proto`), as ZITADEL's clients are.
 */
import { Code, ConnectError, type Transport } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import type { TestServer } from './gatehouse.ts';
import { basic, postForm } from './http.ts';

export const API_SCOPE = 'openid urn:gatehouse:iam:org:project:id:gatehouse:aud';

export const MGMT = {
  org: '120000000000000001',
  otherOrg: '120000000000000002',
  /** IAM_OWNER (machine, JWT tokens). */
  iamAdmin: '220000000000000001',
  /** ORG_OWNER of `org` (machine, JWT tokens). */
  orgAdmin: '220000000000000002',
  /** No management role (machine, opaque tokens). */
  plain: '220000000000000003',
  /** ORG_OWNER of `otherOrg`. */
  otherAdmin: '220000000000000004',
  /** A human of `org` holding IAM_OWNER: out of an ORG_OWNER's reach (docs/security.md 10.13). */
  instanceOwner: '220000000000000005',
  /** A plain human of `org`. */
  alice: '220000000000000006',
  /** A project of `org` with roles. */
  project: '520000000000000001',
  /** A project of `otherOrg`. */
  otherProject: '520000000000000002',
} as const;

export const CALLERS = {
  iamAdmin: { user: 'mgmt-iam-admin', secret: 'iam-admin-secret' },
  orgAdmin: { user: 'mgmt-org-admin', secret: 'org-admin-secret' },
  plain: { user: 'mgmt-plain', secret: 'plain-secret' },
  otherAdmin: { user: 'mgmt-other-admin', secret: 'other-admin-secret' },
} as const;

export type Caller = keyof typeof CALLERS;

/** The bootstrap document of the management suites; `extra` is merged into the first organization. */
export function managementDocument(extra: { projects?: unknown[]; users?: unknown[]; machines?: unknown[] } = {}): Record<string, unknown> {
  return {
    orgs: [
      {
        id: MGMT.org,
        name: 'Managed',
        domain: 'managed.test',
        users: [
          { id: MGMT.instanceOwner, userName: 'owner', password: 'Correct-Horse-9', email: 'owner@managed.test', emailVerified: true, roles: ['IAM_OWNER'] },
          { id: MGMT.alice, userName: 'alice', password: 'Correct-Horse-9', email: 'alice@managed.test', emailVerified: true, givenName: 'Alice', familyName: 'Example' },
          ...(extra.users ?? []),
        ],
        machines: [
          { id: MGMT.iamAdmin, userName: CALLERS.iamAdmin.user, secret: CALLERS.iamAdmin.secret, accessTokenType: 'jwt', roles: ['IAM_OWNER'] },
          { id: MGMT.orgAdmin, userName: CALLERS.orgAdmin.user, secret: CALLERS.orgAdmin.secret, accessTokenType: 'jwt', roles: ['ORG_OWNER'] },
          { id: MGMT.plain, userName: CALLERS.plain.user, secret: CALLERS.plain.secret, accessTokenType: 'opaque' },
          ...(extra.machines ?? []),
        ],
        projects: [
          {
            id: MGMT.project,
            name: 'portal',
            roles: [{ key: 'reader', displayName: 'Reader', group: 'base' }, { key: 'writer', displayName: 'Writer', group: 'base' }],
            apps: [
              { name: 'portal-api', clientId: 'portal-api', clientSecret: 'portal-api-secret', type: 'api', authMethod: 'client_secret_basic' },
            ],
          },
          ...(extra.projects ?? []),
        ],
      },
      {
        id: MGMT.otherOrg,
        name: 'Elsewhere',
        domain: 'elsewhere.test',
        machines: [{ id: MGMT.otherAdmin, userName: CALLERS.otherAdmin.user, secret: CALLERS.otherAdmin.secret, accessTokenType: 'jwt', roles: ['ORG_OWNER'] }],
        projects: [{ id: MGMT.otherProject, name: 'remote', roles: [{ key: 'reader' }] }],
      },
    ],
  };
}

/** An access token for the API from client_credentials. */
export async function apiToken(server: TestServer, caller: Caller, scope = API_SCOPE): Promise<string> {
  const { user, secret } = CALLERS[caller];
  const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope }, { authorization: basic(user, secret) });
  if (reply.status !== 200) throw new Error(`token for ${caller}: ${reply.status} ${reply.text}`);
  return String(reply.json['access_token']);
}

/** Tokens of every caller, fetched once per suite. */
export async function apiTokens(server: TestServer): Promise<Record<Caller, string>> {
  const entries = await Promise.all((Object.keys(CALLERS) as Caller[]).map(async (caller) => [caller, await apiToken(server, caller)] as const));
  return Object.fromEntries(entries) as Record<Caller, string>;
}

export function withToken(token: string): { headers: { authorization: string } } {
  return { headers: { authorization: `Bearer ${token}` } };
}

/** The four protocols on the server's one port. */
export function transports(server: () => TestServer): Array<[string, () => Transport]> {
  return [
    ['gRPC', () => createGrpcTransport({ baseUrl: server().url })],
    ['gRPC-web', () => createGrpcWebTransport({ baseUrl: server().url, httpVersion: '1.1' })],
    ['Connect JSON', () => createConnectTransport({ baseUrl: server().url, httpVersion: '1.1', useBinaryFormat: false })],
    ['Connect binary over h2c', () => createConnectTransport({ baseUrl: server().url, httpVersion: '2', useBinaryFormat: true })],
  ];
}

/** The status code a call failed with (Code.Unknown if it did not fail with a ConnectError). */
export async function failure(call: Promise<unknown>): Promise<{ code: Code; message: string }> {
  try {
    await call;
  } catch (error) {
    const connect = ConnectError.from(error);
    return { code: connect.code, message: connect.rawMessage };
  }
  throw new Error('the call succeeded');
}

/** A REST call with JSON in and out. */
export async function rest(server: TestServer, method: string, path: string, token: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}
