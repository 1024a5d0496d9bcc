/**
 * POST /oauth/v2/token (RFC 6749 §3.2, docs/endpoints.md#token-endpoint): a short fixed pipeline.
 * Parse the form, find the grant, reject repeated parameters (but those the grant declares
 * repeatable, RFC 8693 §2.1), authenticate the client, check the grant is allowed for it, keep only
 * the parameters the grant knows, dispatch.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Gatehouse } from '../context.ts';
import { authenticateClient, type AuthenticatedClient } from './client-auth/index.ts';
import { InvalidRequest, UnauthorizedClient, UnsupportedGrantType } from './errors.ts';
import { readFormKeepingRepeats, required, type Params } from '../http/form.ts';
import { sendJson } from '../http/node-types.ts';
import type { Grant } from './grants/grant.ts';
import { grantRegistry } from './grants/index.ts';
import { countIssued } from './grants/token-response.ts';
import { TOKEN_PATH } from './paths.ts';

export { TOKEN_PATH };

async function findGrant(gh: Gatehouse, grantType: string): Promise<Grant> {
  const grant = grantRegistry.get(grantType);
  if (!grant || (grant.enabled && !(await grant.enabled(gh)))) {
    throw new UnsupportedGrantType(`grant_type ${grantType} is not supported`);
  }
  return grant;
}

function checkAllowed(grant: Grant, client: AuthenticatedClient | undefined): void {
  if (!client || client.kind === 'machine') return; // machine users: the grant itself decides
  if (client.app.kind === 'api') throw new UnauthorizedClient('an API application may only introspect');
  if (!client.app.grantTypes.includes(grant.grantType)) {
    throw new UnauthorizedClient(`grant_type ${grant.grantType} is not allowed for this client`);
  }
}

function onlyDeclared(params: Params, grant: Grant): Params {
  return new Map(grant.parameters.flatMap((name) => (params.has(name) ? [[name, params.get(name)!] as const] : [])));
}

export function tokenEndpoint(gh: Gatehouse) {
  const endpointUrl = `${gh.config.externalUrl}${TOKEN_PATH}`;
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const { params, repeated, lists } = await readFormKeepingRepeats(req, gh.config.maxBodyBytes);
    if (repeated.includes('grant_type')) throw new InvalidRequest('grant_type is repeated');
    const grant = await findGrant(gh, required(params, 'grant_type'));
    const notRepeatable = repeated.find((name) => !grant.repeatable?.includes(name));
    if (notRepeatable !== undefined) throw new InvalidRequest(`${notRepeatable} is repeated`);
    const client =
      grant.clientAuth === 'assertion'
        ? undefined
        : await authenticateClient(gh, req, params, { accepted: grant.clientAuth, machines: grant.machines, endpointUrl });
    checkAllowed(grant, client);
    const response = await grant.handle({ gh, req, params: onlyDeclared(params, grant), lists, client, endpointUrl });
    countIssued(gh, grant.metricName, response);
    sendJson(res, 200, response);
  };
}
