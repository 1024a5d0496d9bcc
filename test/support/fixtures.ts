/** The identities the OAuth suites share: an org, users, machine users with keys, a project with apps. */
import type { KeyObject } from 'node:crypto';
import { importPKCS8 } from 'jose';
import { rsaKeyPair } from './key-pool.ts';

export interface TestKey {
  id: string;
  privateKey: KeyObject;
  publicPem: string;
}

export function testKey(id: string): TestKey {
  const { privateKey, publicKey } = rsaKeyPair();
  return { id, privateKey, publicPem: publicKey.export({ format: 'pem', type: 'spki' }).toString() };
}

export const IDS = {
  org: '100000000000000001',
  otherOrg: '100000000000000002',
  alice: '200000000000000001',
  bob: '200000000000000002',
  reporter: '300000000000000001',
  opaqueBot: '300000000000000002',
  plainBot: '300000000000000003',
  project: '500000000000000001',
  otherProject: '500000000000000002',
} as const;

export const SECRETS = {
  reporter: 'reporter-secret',
  opaqueBot: 'opaque-bot-secret',
  plainBot: 'plain-bot-secret',
  web: 'shop-web-secret',
  post: 'shop-post-secret',
  api: 'shop-api-secret',
  otherApi: 'other-api-secret',
} as const;

export interface Fixture {
  reporterKey: TestKey;
  backendKey: TestKey;
  apiKey: TestKey;
  document: Record<string, unknown>;
}

export function fixture(): Fixture {
  const reporterKey = testKey('400000000000000001');
  const backendKey = testKey('600000000000000001');
  const apiKey = testKey('600000000000000002');
  const document = {
    orgs: [
      {
        id: IDS.org,
        name: 'ACME',
        domain: 'acme.test',
        users: [
          {
            id: IDS.alice,
            userName: 'alice',
            password: 'Correct-Horse-9',
            email: 'alice@acme.test',
            emailVerified: true,
            givenName: 'Alice',
            familyName: 'Example',
            roles: ['ORG_OWNER'],
          },
        ],
        machines: [
          {
            id: IDS.reporter,
            userName: 'reporter',
            secret: SECRETS.reporter,
            accessTokenType: 'jwt',
            roles: ['IAM_OWNER'],
            publicKeys: [{ keyId: reporterKey.id, pem: reporterKey.publicPem }],
          },
          { id: IDS.opaqueBot, userName: 'opaque-bot', secret: SECRETS.opaqueBot, accessTokenType: 'opaque', roles: ['IAM_OWNER'] },
          { id: IDS.plainBot, userName: 'plain-bot', secret: SECRETS.plainBot, accessTokenType: 'jwt' },
        ],
        projects: [
          {
            id: IDS.project,
            name: 'shop',
            apps: [
              {
                name: 'web',
                clientId: 'shop-web',
                clientSecret: SECRETS.web,
                authMethod: 'client_secret_basic',
                redirectUris: ['http://localhost:3000/callback'],
                responseTypes: ['code'],
                grantTypes: ['authorization_code', 'refresh_token'],
                accessTokenType: 'jwt',
              },
              {
                name: 'post',
                clientId: 'shop-post',
                clientSecret: SECRETS.post,
                authMethod: 'client_secret_post',
                redirectUris: ['http://localhost:3000/post-callback'],
                responseTypes: ['code'],
                grantTypes: ['authorization_code'],
                accessTokenType: 'opaque',
              },
              {
                name: 'spa',
                clientId: 'shop-spa',
                authMethod: 'none',
                redirectUris: ['http://localhost:3000/spa-callback'],
                responseTypes: ['code'],
                grantTypes: ['authorization_code', 'refresh_token'],
                accessTokenType: 'opaque',
              },
              { name: 'api', clientId: 'shop-api', clientSecret: SECRETS.api, type: 'api', authMethod: 'client_secret_basic' },
              {
                name: 'api-jwt',
                clientId: 'shop-api-jwt',
                type: 'api',
                authMethod: 'private_key_jwt',
                publicKeys: [{ keyId: apiKey.id, pem: apiKey.publicPem }],
              },
              {
                name: 'backend',
                clientId: 'shop-backend',
                authMethod: 'private_key_jwt',
                publicKeys: [{ keyId: backendKey.id, pem: backendKey.publicPem }],
                redirectUris: ['http://localhost:4000/cb'],
                responseTypes: ['code'],
                grantTypes: ['authorization_code', 'refresh_token'],
                accessTokenType: 'jwt',
              },
            ],
          },
        ],
      },
      {
        id: IDS.otherOrg,
        name: 'Other',
        domain: 'other.test',
        projects: [
          {
            id: IDS.otherProject,
            name: 'elsewhere',
            apps: [{ name: 'other-api', clientId: 'other-api', clientSecret: SECRETS.otherApi, type: 'api', authMethod: 'client_secret_basic' }],
          },
        ],
      },
    ],
  };
  return { reporterKey, backendKey, apiKey, document };
}

/** The key as a WebCrypto CryptoKey, as openid-client's PrivateKeyJwt wants it. */
export function cryptoKey(key: TestKey): ReturnType<typeof importPKCS8> {
  return importPKCS8(key.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), 'RS256');
}
