/** The shapes of caller-chosen ids and of names (organizations, projects, roles) the API and the bootstrap file accept. */

/** Why `value` is no acceptable id, or undefined. */
export function idProblem(value: string): string | undefined {
  return /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/.test(value) ? undefined : 'must be letters, digits, "_" or "-" (at most 128)';
}

/** Why `value` is no acceptable name, or undefined. */
export function nameProblem(value: string): string | undefined {
  if (value.trim() === '') return 'must not be empty';
  if (value !== value.trim()) return 'must not start or end with spaces';
  if ([...value].length > 200) return 'must be at most 200 characters';
  if (/\p{Cc}/u.test(value)) return 'must not contain control characters';
  return undefined;
}

/** A role key: it appears in the scope `…:project:role:{key}`, so scope characters only (RFC 6749 §3.3 NQCHAR). */
export function roleKeyProblem(value: string): string | undefined {
  return /^[\x21\x23-\x5B\x5D-\x7E]{1,200}$/.test(value) ? undefined : 'must be 1 to 200 characters without spaces, quotes or backslashes';
}
