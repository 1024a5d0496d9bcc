/**
 * The browser's PublicKeyCredential in its JSON form (WebAuthn §5.1, `toJSON()`), as a caller hands
 * it over: checked for shape before @simplewebauthn/server looks at it, so that a value of the wrong
 * type is a refused credential rather than an exception from inside the library.
 */
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';

/** Transports a credential may name (WebAuthn §5.8.4); anything else is dropped. */
const TRANSPORTS = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);
const BASE64URL = /^[A-Za-z0-9_-]*$/;
/** Longest base64url value looked at (an attestation object with a certificate chain fits easily). */
const MAX_VALUE = 16 * 1024;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function base64url(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_VALUE && BASE64URL.test(value);
}

/** The credential's own fields, common to both ceremonies. */
function credentialFields(json: unknown): { id: string; response: Record<string, unknown>; clientExtensionResults: Record<string, unknown> } | undefined {
  if (!isRecord(json) || !base64url(json['id']) || json['rawId'] !== json['id'] || json['type'] !== 'public-key' || !isRecord(json['response'])) return undefined;
  const extensions = json['clientExtensionResults'];
  return { id: json['id'], response: json['response'], clientExtensionResults: isRecord(extensions) ? extensions : {} };
}

/** Known transports of a registration response, without repeats. */
export function credentialTransports(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return [...new Set(value.filter((entry): entry is string => typeof entry === 'string' && TRANSPORTS.has(entry)))];
}

/** A registration response (navigator.credentials.create()), or undefined when it has not that shape. */
export function registrationResponse(json: unknown): RegistrationResponseJSON | undefined {
  const fields = credentialFields(json);
  if (fields === undefined) return undefined;
  const { clientDataJSON, attestationObject, transports } = fields.response;
  if (!base64url(clientDataJSON) || !base64url(attestationObject)) return undefined;
  return {
    id: fields.id,
    rawId: fields.id,
    type: 'public-key',
    response: { clientDataJSON, attestationObject, transports: credentialTransports(transports) },
    clientExtensionResults: fields.clientExtensionResults,
  };
}

/** An assertion (navigator.credentials.get()), or undefined when it has not that shape. */
export function authenticationResponse(json: unknown): AuthenticationResponseJSON | undefined {
  const fields = credentialFields(json);
  if (fields === undefined) return undefined;
  const { clientDataJSON, authenticatorData, signature, userHandle } = fields.response;
  if (!base64url(clientDataJSON) || !base64url(authenticatorData) || !base64url(signature)) return undefined;
  if (userHandle !== undefined && userHandle !== null && !base64url(userHandle)) return undefined;
  return {
    id: fields.id,
    rawId: fields.id,
    type: 'public-key',
    response: { clientDataJSON, authenticatorData, signature, ...(typeof userHandle === 'string' ? { userHandle } : {}) },
    clientExtensionResults: fields.clientExtensionResults,
  };
}

/** The WebAuthn user handle of a Gatehouse user: its id's bytes (never a name or an address). */
export function userHandleOf(userId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(userId, 'utf8'));
}
