/**
 * What an error from the database driver (pg, PGlite) or the network beneath it means, for both
 * error renderers (the OAuth classification, toOAuthError in http/errors.ts, and the API one in api/errors.ts), so that one
 * outage gets one answer everywhere:
 *
 * - an outage: the database cannot be reached (503 / Unavailable, not 500 / Internal);
 * - a data exception: PostgreSQL refused a value the request carried (400 / InvalidArgument).
 */

// Error codes of Node's net and dns modules and of PostgreSQL (class 08: connection exception,
// 57P0x: server shutting down or starting, 53300: too many connections, 57014: a statement cancelled
// at its timeout) that mean "the database is out of reach" for this request.
const OUTAGE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EPIPE', 'EAI_AGAIN',
  '08000', '08001', '08003', '08004', '08006', '57P01', '57P02', '57P03', '53300', '57014',
]);
// pg's pool and client report timeouts and lost connections with plain messages, no code.
const OUTAGE_MESSAGES = [/timeout exceeded when trying to connect/i, /connection terminated/i, /connect ECONNREFUSED/i, /query read timeout/i];

/**
 * Whether an error means the database cannot be reached rather than a bug: by its code or message,
 * or those of its causes (up to five deep) and of the errors an AggregateError gathers.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  // Duck-typed, not instanceof Error: errors from Node's internals may come from another realm.
  for (let e: unknown = error, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && OUTAGE_CODES.has(code)) return true;
    if (typeof message === 'string' && OUTAGE_MESSAGES.some((m) => m.test(message))) return true;
    if (e instanceof AggregateError && e.errors.some(isDatabaseUnavailable)) return true;
  }
  return false;
}

/**
 * Whether PostgreSQL refused a value the request carried (SQLSTATE class 22, data exception: a NUL
 * character, a number out of range, text that is not valid in the encoding): bad input, not a bug.
 */
export function isDataException(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as Error & { code?: unknown }).code;
    if (typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code)) return true;
  }
  return false;
}
