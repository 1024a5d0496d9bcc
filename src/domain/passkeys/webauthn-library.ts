/**
 * `@simplewebauthn/server`, loaded on first use. Loading it takes about 175 ms (its ASN.1 and CBOR
 * modules), more than any other dependency, and only passkey ceremonies need it: a server, a CLI
 * command or a test file that never runs one does not pay for it.
 */
export type WebAuthnLibrary = typeof import('@simplewebauthn/server');

let library: Promise<WebAuthnLibrary> | undefined;

export function webauthnLibrary(): Promise<WebAuthnLibrary> {
  library ??= import('@simplewebauthn/server').catch((error: unknown) => {
    library = undefined; // a failed load is tried again by the next ceremony
    throw error;
  });
  return library;
}
