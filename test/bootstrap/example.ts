/**
 * A bootstrap file in the shape of docs/bootstrap.md#a-larger-example, with real generated keys, and
 * a minimal valid document for the validation tables.
 */
import type { KeyObject } from 'node:crypto';
import { rsaKeyPair } from '../support/key-pool.ts';

export interface GeneratedKey {
  privateKey: KeyObject;
  publicPem: string;
}

export function rsaKey(): GeneratedKey {
  const { privateKey, publicKey } = rsaKeyPair();
  return { privateKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

const indent = (text: string, spaces: number) =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => `${' '.repeat(spaces)}${line}`)
    .join('\n');

export interface Example {
  yaml: string;
  reporterKey: GeneratedKey;
  backendKey: GeneratedKey;
}

export function exampleYaml(reporterKey = rsaKey(), backendKey = rsaKey()): Example {
  const yaml = `# Gatehouse bootstrap file, as docs/bootstrap.md#a-larger-example
features:
  oidcTokenExchange: true
security:
  enableImpersonation: true
orgs:
  - id: "100000000000000001"
    name: ACME
    domain: acme.test
    allowRegister: true
    users:
      - id: "200000000000000001"
        userName: alice
        password: "Correct-Horse-9"
        email: alice@acme.test
        emailVerified: true
        givenName: Alice
        familyName: Example
        nickname: ali
        phone: "+41791234567"
        preferredLanguage: en
        roles: [ORG_OWNER]
      - userName: bob
        password: "Another-Horse-7"
        email: bob@acme.test
        emailVerified: false
    machines:
      - id: "300000000000000001"
        userName: reporter
        secret: "reporter-secret"
        accessTokenType: jwt
        roles: [IAM_OWNER]
        publicKeys:
          - keyId: "400000000000000001"
            pem: |
${indent(reporterKey.publicPem, 14)}
    projects:
      - id: "500000000000000001"
        name: shop
        apps:
          - name: web
            clientId: shop-web
            clientSecret: "shop-web-secret"
            authMethod: client_secret_basic
            redirectUris: ["http://localhost:3000/callback"]
            postLogoutRedirectUris: ["http://localhost:3000/"]
            responseTypes: [code]
            grantTypes: [authorization_code, refresh_token]
            accessTokenType: jwt
            idTokenUserinfoAssertion: false
            devMode: true
          - name: spa
            clientId: shop-spa
            authMethod: none
            redirectUris: ["http://localhost:3000/spa-callback"]
            responseTypes: [code]
            grantTypes: [authorization_code, refresh_token]
            accessTokenType: opaque
          - name: api
            clientId: shop-api
            clientSecret: "shop-api-secret"
            type: api
            authMethod: client_secret_basic
          - name: backend
            clientId: shop-backend
            authMethod: private_key_jwt
            publicKeys:
              - keyId: "600000000000000001"
                pem: |
${indent(backendKey.publicPem, 18)}
            redirectUris: ["http://localhost:4000/cb"]
            responseTypes: [code]
            grantTypes: [authorization_code, refresh_token, "urn:ietf:params:oauth:grant-type:token-exchange"]
            accessTokenType: jwt
          - name: portal
            clientId: shop-portal
            authMethod: none
            redirectUris: ["http://localhost:3000/portal-callback"]
            responseTypes: ["id_token token", id_token]
            grantTypes: [implicit]
            accessTokenType: jwt
`;
  return { yaml, reporterKey, backendKey };
}

/** A small valid document, as plain data, for tables that break one thing at a time. */
export function minimalDocument(publicPem: string): Record<string, unknown> {
  return {
    features: { oidcTokenExchange: false },
    orgs: [
      {
        name: 'ACME',
        domain: 'acme.test',
        users: [{ userName: 'alice', password: 'Correct-Horse-9', roles: ['ORG_OWNER'] }],
        machines: [{ userName: 'reporter', secret: 'reporter-secret', publicKeys: [{ keyId: 'k1', pem: publicPem }] }],
        projects: [
          {
            name: 'shop',
            apps: [
              {
                name: 'web',
                clientId: 'shop-web',
                clientSecret: 'shop-web-secret',
                authMethod: 'client_secret_basic',
                redirectUris: ['http://localhost:3000/callback'],
                responseTypes: ['code'],
                grantTypes: ['authorization_code', 'refresh_token'],
              },
              { name: 'api', clientId: 'shop-api', clientSecret: 'shop-api-secret', type: 'api', authMethod: 'client_secret_basic' },
            ],
          },
        ],
      },
    ],
  };
}
