/**
 * The one rule for an email address, wherever one is accepted: the API's contact email, the login
 * UI's registration and the bootstrap file. A simple RFC 5321-style check, not the full grammar: a
 * dot-atom local part, a domain of DNS labels whose last one is not numeric.
 */

/** Longest accepted email address (RFC 5321 path limit minus the angle brackets). */
export const MAX_EMAIL_LENGTH = 254;

const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** A simple RFC 5321-style check: dot-atom local part (≤ 64) @ a domain of ≥ 2 DNS labels, ≤ 254 in all. */
export function isValidEmail(address: string): boolean {
  if (address.length > MAX_EMAIL_LENGTH) return false;
  const at = address.lastIndexOf('@');
  if (at <= 0) return false;
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (local.length > 64 || !LOCAL.test(local)) return false;
  const labels = domain.split('.');
  return labels.length >= 2 && labels.every((label) => LABEL.test(label)) && !/^\d+$/.test(labels[labels.length - 1] ?? '');
}
