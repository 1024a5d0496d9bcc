/**
 * The WebAuthn relying party of Gatehouse (docs/passkeys.md#the-relying-party): its id is the host
 * name of GATEHOUSE_EXTERNAL_URL (or GATEHOUSE_WEBAUTHN_RP_ID, a domain that host belongs to), its
 * origin the external URL's origin. Passkeys are disabled when there is no valid relying party id (an
 * IP-address host) or when browsers would not offer WebAuthn on the origin (plain http other than
 * localhost); `relyingParty` says why, for the start-up log and the API's FailedPrecondition.
 */
import net from 'node:net';
import type { Config } from '../../config/index.ts';

export type RelyingParty = { enabled: true; id: string; origin: string } | { enabled: false; reason: string };

/** COSE algorithms offered and accepted (docs/passkeys.md#the-relying-party): ES256, EdDSA, RS256, in the order of preference. */
export const PASSKEY_ALGORITHMS = [-7, -8, -257] as const;

/** How long a ceremony may take: the browser's timeout, and the life of a registration or sign-in challenge. */
export const PASSKEY_CEREMONY_SECONDS = 5 * 60;

function isLocalhost(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost');
}

export function relyingParty(config: Pick<Config, 'externalUrl' | 'webauthnRpId'>): RelyingParty {
  const url = new URL(config.externalUrl);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (config.webauthnRpId === undefined && net.isIP(host) !== 0) {
    return {
      enabled: false,
      reason: `passkeys are disabled: the host of GATEHOUSE_EXTERNAL_URL (${host}) is an IP address, which is not a valid WebAuthn relying party id; use a host name (or GATEHOUSE_WEBAUTHN_RP_ID)`,
    };
  }
  if (url.protocol === 'http:' && !isLocalhost(url.hostname)) {
    return { enabled: false, reason: `passkeys are disabled: browsers offer them on https origins only (and http://localhost), and GATEHOUSE_EXTERNAL_URL is ${url.origin}` };
  }
  return { enabled: true, id: config.webauthnRpId ?? url.hostname, origin: url.origin };
}

/** Whether passkeys are enabled, and if not why: for the start-up log. */
export function passkeyStatus(config: Pick<Config, 'externalUrl' | 'webauthnRpId'>): { enabled: boolean; message: string } {
  const party = relyingParty(config);
  return party.enabled ? { enabled: true, message: `passkeys enabled for relying party ${party.id} on ${party.origin}` } : { enabled: false, message: party.reason };
}

/** The relying party's display name (docs/passkeys.md#the-relying-party): the organization's name, or Gatehouse. */
export function relyingPartyName(orgName: string | null | undefined): string {
  const name = orgName?.trim();
  return name ? name : 'Gatehouse';
}
