/**
 * A refused client authentication as a first integration meets it: openid-client, whose default is
 * to post the secret in the form, against an application registered for HTTP Basic is told which
 * method the application is registered for; every other refusal keeps the generic words; and each
 * refusal is logged at `info` with the client id and the reason, where an operator looks
 * (docs/decisions.md#client-authentication).
 */
import { Writable } from 'node:stream';
import * as client from 'openid-client';
import { createLogger } from '../../src/server/request-context.ts';
import { fixture, SECRETS } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { basic, postForm } from '../support/http.ts';

let server: TestServer;
const lines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  server = await startTestServer(fixture().document, {}, { log: createLogger('info', sink) });
});
afterAll(() => server?.stop());

const refusals = () => lines.filter((line) => line['msg'] === 'request refused');

async function grantWith(auth: client.ClientAuth, secret: string | undefined): Promise<unknown> {
  const config = await client.discovery(new URL(server.url), 'shop-web', secret, auth, { execute: [client.allowInsecureRequests] });
  return client.genericGrantRequest(config, 'authorization_code', { code: 'not-a-code', redirect_uri: 'http://localhost:3000/callback' }).then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('a client that authenticated another way than it is registered for', () => {
  it('openid-client with its default (the secret in the form) is told the application is registered for Basic', async () => {
    lines.length = 0;
    const error = await grantWith(client.ClientSecretPost(SECRETS.web), SECRETS.web);
    expect(error).toBeInstanceOf(client.ResponseBodyError);
    expect(error).toMatchObject({
      status: 401,
      error: 'invalid_client',
      error_description: 'client authentication failed: client is registered for client_secret_basic, not client_secret_post',
    });
    expect(refusals()).toEqual([
      expect.objectContaining({ level: 30, error: 'invalid_client', clientId: 'shop-web', cause: 'client is registered for client_secret_basic, not client_secret_post', path: '/oauth/v2/token' }),
    ]);
  });

  it('with Basic, as registered, it gets past client authentication to the grant', async () => {
    const error = await grantWith(client.ClientSecretBasic(SECRETS.web), SECRETS.web);
    expect(error).toMatchObject({ error: 'invalid_grant' });
  });
});

describe('other refusals say nothing more, and are logged alike', () => {
  it.each([
    ['a wrong secret', basic('shop-web', 'wrong-secret'), 'shop-web', 'client secret does not match'],
    ['an unknown client', basic('nobody-here', 'whatever'), 'nobody-here', 'unknown client nobody-here'],
  ])('%s', async (_name, authorization, clientId, cause) => {
    lines.length = 0;
    const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'authorization_code', code: 'x', redirect_uri: 'http://localhost:3000/callback' }, { authorization });
    expect(reply.status).toBe(401);
    expect(reply.json).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
    expect(refusals()).toEqual([expect.objectContaining({ level: 30, clientId, cause })]);
  });

  it('a request with no client authentication at all is logged without a client id', async () => {
    lines.length = 0;
    const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'client_credentials' });
    expect(reply.status).toBe(401);
    expect(reply.json).toEqual({ error: 'invalid_client', error_description: 'client authentication failed' });
    expect(refusals()).toEqual([expect.objectContaining({ level: 30, error: 'invalid_client', cause: 'no client authentication' })]);
  });
});
