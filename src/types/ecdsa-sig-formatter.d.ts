/**
 * Types for ecdsa-sig-formatter 1.0 (the package ships none): conversions between an ECDSA
 * signature's DER encoding (what OpenSSL produces and takes) and JOSE's fixed-length R‖S
 * (RFC 7518 §3.4), for ES256, ES384 and ES512.
 */
declare module 'ecdsa-sig-formatter' {
  /** DER (a Buffer, or base64) to R‖S, base64url. Throws on a malformed signature. */
  export function derToJose(signature: Buffer | string, alg: string): string;
  /** R‖S (a Buffer, or base64url) to DER. Throws when it is not exactly twice the curve's size. */
  export function joseToDer(signature: Buffer | string, alg: string): Buffer;
}
