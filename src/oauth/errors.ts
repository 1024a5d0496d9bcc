/**
 * The OAuth endpoints' errors (RFC 6749 §5.2, RFC 6750 §3.1), the rest of the one OAuth error
 * hierarchy whose base lives in http/errors.ts (form parsing and the login UI raise it too). For
 * invalid_grant, invalid_client and invalid_token the public description is generic so that nothing
 * about other clients' grants leaks; the reason goes to `detail`. OAuth code imports every error
 * from here, the base and invalid_request included.
 */
import { OAuthError } from '../http/errors.ts';

export { InvalidRequest, OAuthError } from '../http/errors.ts';

export class InvalidClient extends OAuthError {
  /** Set when the client tried HTTP Basic: the 401 then carries a Basic challenge (RFC 6749 §5.2). */
  readonly basic: boolean;
  constructor(detail: string, basic = false) {
    super('invalid_client', 401, 'client authentication failed', detail);
    this.basic = basic;
  }
}

export class InvalidGrant extends OAuthError {
  constructor(detail: string) {
    super('invalid_grant', 400, 'grant request is invalid', detail);
  }
}

export class InvalidScope extends OAuthError {
  constructor(description: string) {
    super('invalid_scope', 400, description);
  }
}

export class UnauthorizedClient extends OAuthError {
  constructor(description: string) {
    super('unauthorized_client', 400, description);
  }
}

export class UnsupportedGrantType extends OAuthError {
  constructor(description: string) {
    super('unsupported_grant_type', 400, description);
  }
}

/** RFC 8693 §2.2.2: the requested audience is not one the presented tokens allow. */
export class InvalidTarget extends OAuthError {
  constructor(description: string) {
    super('invalid_target', 400, description);
  }
}

export class InvalidToken extends OAuthError {
  constructor(detail: string) {
    super('invalid_token', 401, 'access token is invalid', detail);
  }
}

/**
 * RFC 6750 §3.1: a request that lacks any authentication information gets the bare challenge and no
 * error code or other error information, so the body is an empty JSON object.
 */
export class NoAccessToken extends OAuthError {
  constructor() {
    super('no_access_token', 401, 'no access token');
  }

  override body(): Record<string, string> {
    return {};
  }
}
