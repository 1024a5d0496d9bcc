/**
 * Registered public keys (machine users' and applications' keys,
 * docs/management-api.md#the-identity-model) as KeyObjects, parsed once per PEM instead of on every
 * assertion: parsing a key costs more than verifying an ES256 signature, and jose keeps its own
 * imported form per KeyObject, so the same object must come back each time. The PEM is the key, so
 * a replaced or removed key is simply never asked for again; the map is bounded and starts over
 * when full.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';

const MAX_KEYS = 10_000;
const parsed = new Map<string, KeyObject>();

export function publicKeyOf(pem: string): KeyObject {
  let key = parsed.get(pem);
  if (!key) {
    key = createPublicKey(pem);
    if (parsed.size >= MAX_KEYS) parsed.clear();
    parsed.set(pem, key);
  }
  return key;
}

/**
 * A public key's PEM as it is stored (SPKI), so that a key written differently (another PEM
 * header, line length or encoding of the same key) compares equal; text that is no key stays as it is.
 */
export function normalizedPem(pem: string): string {
  try {
    return createPublicKey(pem).export({ type: 'spki', format: 'pem' }).toString();
  } catch {
    return pem;
  }
}
