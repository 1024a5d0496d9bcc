/**
 * GET and POST /oidc/v1/userinfo (OIDC Core §5.3, docs/endpoints.md#userinfo-endpoint). The user's
 * access token comes as a Bearer header (RFC 6750 §2.1) or, on POST, as the access_token form
 * parameter (§2.2), never both. It must be valid, unrevoked and carry openid; the answer is `sub`
 * and the claims of the granted scopes. Refusals carry the RFC 6750 §3 challenge.
 */
import type { Request, Response } from 'express';
import type { Gatehouse } from '../context.ts';
import { activeTokenUser } from '../domain/tokens/token-user.ts';
import { userClaims } from './claims.ts';
import { tokenRoleClaims } from './role-claims.ts';
import { InvalidRequest, InvalidToken, NoAccessToken, OAuthError } from './errors.ts';
import { readForm } from '../http/form.ts';

export const USERINFO_PATH = '/oidc/v1/userinfo';

/** RFC 6750 §3.1: the token lacks a scope the resource needs. */
class InsufficientScope extends OAuthError {
  constructor(description: string) {
    super('insufficient_scope', 403, description);
  }
}

/** The error world renders the body; the challenge header is set here, where its wording is known. */
function refuse(res: Response, error: OAuthError, challenge: string): never {
  res.set('WWW-Authenticate', challenge);
  throw error;
}

function isForm(req: Request): boolean {
  const type = req.headers['content-type'];
  return type !== undefined && type.split(';')[0]!.trim().toLowerCase() === 'application/x-www-form-urlencoded';
}

/** The access token of the request, from exactly one of the two places it may be. */
async function presentedToken(gh: Gatehouse, req: Request, res: Response): Promise<string> {
  const header = req.headers.authorization;
  const fromHeader = header !== undefined && /^bearer /i.test(header) ? header.slice(7).trim() : undefined;
  const form = req.method === 'POST' && isForm(req) ? await readForm(req, gh.config.maxBodyBytes) : undefined;
  const fromBody = form?.get('access_token');
  if (fromHeader !== undefined && fromBody !== undefined) {
    refuse(res, new InvalidRequest('the access token was sent in the header and in the body'), 'Bearer error="invalid_request"'); // RFC 6750 §2
  }
  const token = fromHeader ?? fromBody;
  if (token === undefined || token === '') refuse(res, new NoAccessToken(), 'Bearer'); // RFC 6750 §3.1: no error code
  return token;
}

export function userinfoEndpoint(gh: Gatehouse) {
  return async (req: Request, res: Response): Promise<void> => {
    const token = await presentedToken(gh, req, res);
    const claims = await gh.tokens.verifyAccessToken(token);
    if (!claims) refuse(res, new InvalidToken('token is invalid, expired or revoked'), 'Bearer error="invalid_token"');
    const user = await activeTokenUser(gh.directory, gh.instanceId, claims);
    if (!user) refuse(res, new InvalidToken('the subject or actor of the token is not active'), 'Bearer error="invalid_token"');
    if (!claims.scopes.includes('openid')) {
      refuse(res, new InsufficientScope('the access token lacks the openid scope'), 'Bearer error="insufficient_scope", scope="openid"');
    }
    // RFC 8693 §4.1: a delegated or impersonating token says who acts.
    const roles = await tokenRoleClaims(gh, user, claims);
    res.status(200).json({ sub: user.id, ...userClaims(user, claims.scopes), ...roles, ...(claims.actor ? { act: claims.actor } : {}) });
  };
}
