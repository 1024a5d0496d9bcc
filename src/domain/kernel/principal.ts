/** The authenticated caller of an API call, as the API interceptor finds it in the bearer token. */
export interface RoleGrant {
  /** IAM_OWNER, ORG_OWNER, IAM_ADMIN_IMPERSONATOR, ORG_ADMIN_IMPERSONATOR */
  role: string;
  /** The organization an org role applies to; '' for instance-wide roles. */
  orgId: string;
}

export interface Principal {
  instanceId: string;
  userId: string;
  orgId: string;
  kind: 'human' | 'machine';
  /** The client the token was issued to. */
  clientId: string;
  scopes: ReadonlySet<string>;
  audience: readonly string[];
  roles: readonly RoleGrant[];
  /** The token's id (jti), for logs. */
  tokenId: string;
  /** Who acts for the user (RFC 8693 `act.sub`), when the token came from a delegation or an impersonation. */
  actorId?: string | undefined;
  /**
   * How the sign-in behind the token authenticated (RFC 8176: pwd, otp, mfa), from the JWT's `amr`
   * or the opaque token's row; empty or absent for tokens without a user sign-in (machine grants).
   * With an actor, it may describe the actor's sign-in (impersonation), not the user's.
   */
  amr?: readonly string[] | undefined;
  /** When the sign-in behind the token happened (the token's `auth_time`); absent for machine grants. */
  authTime?: Date | undefined;
  /** The browser session the token was issued in (`sid`), if any. */
  sessionId?: string | undefined;
}

/** Who makes a change the principal asks for, for the event's creator: the actor, if someone acts for the user. */
export function creatorOf(principal: Principal): string {
  return principal.actorId ?? principal.userId;
}

export function hasRole(principal: Principal, role: string, orgId?: string): boolean {
  return principal.roles.some((grant) => grant.role === role && (grant.orgId === '' || orgId === undefined || grant.orgId === orgId));
}
