/** Signs RFC 7523 assertions the way ZITADEL's SDKs do from a key file. */
import { randomUUID, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';

export interface AssertionOptions {
  issuer: string;
  audience: string;
  key: KeyObject;
  kid?: string | undefined;
  subject?: string;
  jti?: string | null;
  expiresIn?: number;
  iat?: number;
}

export function signAssertion(options: AssertionOptions): Promise<string> {
  const now = options.iat ?? Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({})
    .setProtectedHeader({ alg: 'RS256', ...(options.kid ? { kid: options.kid } : {}) })
    .setIssuer(options.issuer)
    .setSubject(options.subject ?? options.issuer)
    .setAudience(options.audience)
    .setIssuedAt(now)
    .setExpirationTime(now + (options.expiresIn ?? 300));
  if (options.jti !== null) jwt.setJti(options.jti ?? randomUUID());
  return jwt.sign(options.key);
}
