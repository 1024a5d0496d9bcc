/**
 * One OAuth error hierarchy (RFC 6749 §5.2, RFC 6750 §3.1). `description` is what
 * the client sees; `detail` stays in logs and tests. For invalid_grant, invalid_client and
 * invalid_token the public description is generic so that nothing about other clients' grants leaks.
 */
export class OAuthError extends Error {
  readonly error: string;
  readonly status: number;
  readonly description: string;
  readonly detail: string | undefined;

  constructor(error: string, status: number, description: string, detail?: string) {
    super(detail ?? description);
    this.name = 'OAuthError';
    this.error = error;
    this.status = status;
    this.description = description;
    this.detail = detail;
  }

  body(): Record<string, string> {
    return { error: this.error, error_description: publicText(this.description) };
  }
}

/**
 * RFC 6749 §5.2: error_description is limited to %x20-21 / %x23-5B / %x5D-7E. Descriptions may quote
 * what the client sent (a token type, an audience) or a library's words: quotes become apostrophes,
 * backslashes slashes, anything else outside the set '?', and it is cut short.
 */
function publicText(text: string): string {
  const safe = text.replace(/"/g, "'").replace(/\\/g, '/').replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '?');
  return safe.length > 300 ? `${safe.slice(0, 297)}...` : safe;
}

export class InvalidRequest extends OAuthError {
  constructor(description: string, status = 400) {
    super('invalid_request', status, description);
  }
}

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

export class ServerError extends OAuthError {
  constructor(detail: string) {
    super('server_error', 500, 'unexpected server error', detail);
  }
}

/** An error the client should retry after a while: the answer carries Retry-After (RFC 9110 §10.2.3). */
export class RetryLater extends OAuthError {
  readonly retryAfterSeconds: number;
  constructor(error: string, status: number, description: string, detail: string, retryAfterSeconds: number) {
    super(error, status, description, detail);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The database is unreachable, or the secret-hashing queue is full (SPEC 10.11): 503. */
export class TemporarilyUnavailable extends RetryLater {
  constructor(detail: string, retryAfterSeconds = 5) {
    super('temporarily_unavailable', 503, 'service temporarily unavailable', detail, retryAfterSeconds);
  }
}

/**
 * SPEC 10.11: too many failed client authentications from this address. 429 with
 * temporarily_unavailable, the registered code for "try again later": invalid_client would tell a
 * client whose credentials are right that they are wrong, and slow_down belongs to device-code
 * polling (RFC 8628 §3.5).
 */
export class TooManyFailures extends RetryLater {
  constructor(retryAfterSeconds: number) {
    super('temporarily_unavailable', 429, 'too many failed client authentications from this address; try again later', 'address throttled', retryAfterSeconds);
  }
}
