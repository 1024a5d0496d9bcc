/**
 * What a declared state changes of a stored one: the fields whose values differ. A writer that is
 * asked again for what is already there (the bootstrap file applied twice) then writes nothing and
 * appends no event. Key order and Date identity do not count; jsonb reorders keys.
 */

function canonical(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, canonical(v)]));
  }
  return value ?? null;
}

/** Whether two values are the same as stored (undefined and null alike). */
export function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/** The entries of `desired` that differ from `current`. */
export function changedColumns<T extends Record<string, unknown>>(current: Record<string, unknown>, desired: T): Partial<T> {
  const result: Partial<T> = {};
  for (const key of Object.keys(desired) as (keyof T & string)[]) {
    if (!sameValue(current[key], desired[key])) result[key] = desired[key];
  }
  return result;
}
