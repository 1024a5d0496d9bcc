/**
 * POST /oauth/v2/introspect (RFC 7662, docs/endpoints.md#introspection-endpoint). The caller
 * authenticates with client_secret_basic or private_key_jwt; a token is active only when it is valid,
 * unrevoked, and meant for the caller (its audience contains the caller's client id, or its project id
 * when the token's client is of that project's organization: token-audience.ts). Anything else is
 * {"active": false}.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Gatehouse } from '../context.ts';
import { activeTokenUser } from '../domain/tokens/token-user.ts';
import { authenticateClient } from './client-auth/index.ts';
import { InvalidClient } from './errors.ts';
import { readForm, required } from '../http/form.ts';
import { sendJson } from '../http/node-types.ts';
import { userClaims } from './claims.ts';
import { tokenRoleClaims } from './role-claims.ts';
import { meantFor } from './token-audience.ts';
import { INTROSPECTION_AUTH_METHODS } from '../oidc/vocabulary.ts';

export const INTROSPECT_PATH = '/oauth/v2/introspect';

export function introspectionEndpoint(gh: Gatehouse) {
  const endpointUrl = `${gh.config.externalUrl}${INTROSPECT_PATH}`;
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const params = await readForm(req, gh.config.maxBodyBytes);
    const client = await authenticateClient(gh, req, params, {
      accepted: INTROSPECTION_AUTH_METHODS,
      machines: false,
      endpointUrl,
      basicForPost: true,
    });
    if (client.kind !== 'app') throw new InvalidClient('only applications introspect');
    const token = required(params, 'token');
    const claims = await gh.tokens.verifyAccessToken(token);
    const caller = client.app;
    // A personal access token is meant for every application of the instance, as ZITADEL
    // introspects one (it adds the introspecting client and project to the token's audience).
    let meant = claims !== undefined && (claims.personal === true || meantFor(gh, claims, caller));
    if (meant instanceof Promise) meant = await meant; // only for a project id in the audience
    if (!claims || !meant) {
      sendJson(res, 200, { active: false });
      return;
    }
    const user = await activeTokenUser(gh.directory, gh.instanceId, claims);
    if (!user) {
      sendJson(res, 200, { active: false });
      return;
    }
    const roles = await tokenRoleClaims(gh, user, claims);
    sendJson(res, 200, {
      active: true,
      scope: claims.scopes.join(' '),
      client_id: claims.clientId,
      token_type: 'Bearer',
      exp: claims.exp,
      iat: claims.iat,
      nbf: claims.iat,
      sub: claims.sub,
      aud: claims.personal ? [...new Set([...claims.audience, caller.clientId, caller.projectId])] : claims.audience,
      iss: gh.config.externalUrl,
      jti: claims.jti,
      username: user.loginName,
      ...(claims.actor ? { act: claims.actor } : {}),
      ...userClaims(user, claims.scopes),
      ...roles,
    });
  };
}
