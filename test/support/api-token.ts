/**
 * The token an administrator authorizes API calls with in the /docs tests: today an access token of
 * the fixture's IAM_OWNER machine user `reporter` from client_credentials, with the API audience
 * scope (docs/security.md 10.5). The one place that decides it, so that the tests can move to a
 * personal access token (docs/management-api.md#personal-access-tokens) in one edit.
 */
import { SECRETS } from './fixtures.ts';
import type { TestServer } from './gatehouse.ts';
import { basic, postForm } from './http.ts';

export async function administratorToken(server: TestServer): Promise<string> {
  const scope = `openid urn:${server.config.serviceName}:iam:org:project:id:${server.config.serviceName}:aud`;
  const reply = await postForm(`${server.url}/oauth/v2/token`, { grant_type: 'client_credentials', scope }, { authorization: basic('reporter', SECRETS.reporter) });
  if (reply.status !== 200) throw new Error(`administrator token: ${reply.status} ${reply.text}`);
  return String(reply.json['access_token']);
}
