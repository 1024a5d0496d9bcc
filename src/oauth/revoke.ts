/**
 * POST /oauth/v2/revoke (RFC 7009, docs/endpoints.md#revocation-endpoint). Any of the four client
 * authentication methods. An access token revokes only itself; a refresh token revokes its whole
 * grant, access tokens included. Unknown, invalid or foreign tokens answer 200 like revoked ones
 * (RFC 7009 §2.2), so the endpoint is no oracle for other clients' tokens. token_type_hint is
 * advisory (RFC 7009 §2.1): the token is found by its shape whatever the hint says, and a hint we do
 * not know is ignored, as introspection does; unsupported_token_type is never answered, since every
 * token kind can be revoked.
 */
import type { Request, Response } from 'express';
import type { Gatehouse } from '../context.ts';
import { sha256 } from '../domain/kernel/crypto.ts';
import { findTokenByHash } from '../store/tokens.ts';
import { authenticateClient } from './client-auth/index.ts';
import { readForm, required } from '../http/form.ts';
import { AUTH_METHODS } from '../oidc/vocabulary.ts';

/** RFC 7009 §2.1: every client authentication method (docs/endpoints.md#revocation-endpoint). */
export const REVOCATION_AUTH_METHODS = AUTH_METHODS;

export const REVOKE_PATH = '/oauth/v2/revoke';

export function revocationEndpoint(gh: Gatehouse) {
  const endpointUrl = `${gh.config.externalUrl}${REVOKE_PATH}`;
  return async (req: Request, res: Response): Promise<void> => {
    const params = await readForm(req, gh.config.maxBodyBytes);
    const client = await authenticateClient(gh, req, params, {
      accepted: REVOCATION_AUTH_METHODS,
      machines: true,
      endpointUrl,
    });
    const token = required(params, 'token');

    if (!token.includes('.')) {
      const row = await findTokenByHash(gh.db, sha256(token));
      if (row && row.client_id === client.clientId) {
        if (row.kind === 'refresh' && row.grant_id) {
          await gh.tokens.revokeGrant(row.grant_id, row.absolute_expires_at ?? row.expires_at);
        } else {
          await gh.tokens.revokeStoredToken(row);
        }
      }
    } else {
      const claims = await gh.tokens.verifyAccessToken(token);
      if (claims && claims.clientId === client.clientId) await gh.tokens.revokeAccessToken(claims, false);
    }
    res.status(200).end();
  };
}
