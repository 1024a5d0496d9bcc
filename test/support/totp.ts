/** TOTP codes as an authenticator app computes them, for the OTP suites. */
import { Secret, TOTP } from 'otpauth';

export function codeFor(secret: string, at = Date.now()): string {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at });
}

/** A 6-digit code that none of the accepted steps around now produces. */
export function wrongCode(secret: string): string {
  const valid = new Set([-60_000, -30_000, 0, 30_000, 60_000].map((d) => codeFor(secret, Date.now() + d)));
  for (let n = 0; ; n++) {
    const candidate = String(n).padStart(6, '0');
    if (!valid.has(candidate)) return candidate;
  }
}
