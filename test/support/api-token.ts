/**
 * The token an administrator authorizes API calls with in the /docs tests: a personal access token
 * (docs/management-api.md#personal-access-tokens) of the fixture's IAM_OWNER machine user `reporter`,
 * as the page tells an operator to use. It is made through the API itself, with an access token
 * from client_credentials and the API audience scope (docs/security.md 10.5).
 */
import { IDS, SECRETS } from './fixtures.ts';
import type { TestServer } from './gatehouse.ts';
import { basic, postForm } from './http.ts';

export async function administratorToken(server: TestServer): Promise<string> {
  const scope = `openid urn:${server.config.serviceName}:iam:org:project:id:${server.config.serviceName}:aud`;
  const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope }, { authorization: basic('reporter', SECRETS.reporter) });
  if (reply.status !== 200) throw new Error(`administrator token: ${reply.status} ${reply.text}`);
  const added = await fetch(`${server.url}/v2/users/${IDS.reporter}/pats`, {
    method: 'POST',
    headers: { authorization: `Bearer ${String(reply.json['access_token'])}`, 'content-type': 'application/json' },
    body: JSON.stringify({ expirationDate: new Date(Date.now() + 86_400_000).toISOString() }),
  });
  const body = (await added.json()) as { token?: string };
  if (added.status !== 200 || body.token === undefined) throw new Error(`personal access token: ${added.status} ${JSON.stringify(body)}`);
  return body.token;
}
