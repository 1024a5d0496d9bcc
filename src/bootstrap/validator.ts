/**
 * A small reader for untyped documents that collects every problem with its path instead of
 * stopping at the first. Each `Fields` wraps one mapping, reports its unknown keys up front and
 * hands out typed values; a value of the wrong type is reported and read as `undefined`.
 */
import type { BootstrapIssue } from './errors.ts';

export class Issues {
  readonly file: string;
  readonly list: BootstrapIssue[] = [];

  constructor(file: string) {
    this.file = file;
  }

  add(path: string, message: string): void {
    this.list.push({ file: this.file, path, message });
  }
}

export function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  const name = /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? key : JSON.stringify(key);
  return parent === '' ? name : `${parent}.${name}`;
}

export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'nothing (null)';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return `${typeof value === 'number' ? 'the number' : `the ${typeof value}`} ${String(value)}`;
}

export function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export interface StringRule {
  /** Checked after the type; returns the problem, or undefined when the value is fine. */
  check?: (value: string) => string | undefined;
}

export function readString(issues: Issues, path: string, value: unknown, rule: StringRule = {}): string | undefined {
  if (typeof value !== 'string') {
    const hint = typeof value === 'number' && /(id|Id)$/.test(path) ? ' (quote identifiers: large numbers lose precision)' : '';
    issues.add(path, `must be a string, got ${describeValue(value)}${hint}`);
    return undefined;
  }
  if (value.trim() === '') {
    issues.add(path, 'must not be empty');
    return undefined;
  }
  const problem = rule.check?.(value);
  if (problem !== undefined) {
    issues.add(path, problem);
    return undefined;
  }
  return value;
}

export function readEnum<T extends string>(issues: Issues, path: string, value: unknown, allowed: readonly T[]): T | undefined {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  issues.add(path, `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}, got ${describeValue(value)}`);
  return undefined;
}

/** The closest allowed key, for "did you mean" hints on typos. */
function suggestion(key: string, allowed: readonly string[]): string | undefined {
  const distance = (a: string, b: string): number => {
    const row = Array.from({ length: b.length + 1 }, (_, i) => i);
    for (let i = 1; i <= a.length; i++) {
      let previous = row[0]!;
      row[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const current = row[j]!;
        row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0 : 1));
        previous = current;
      }
    }
    return row[b.length]!;
  };
  const best = allowed.map((name) => ({ name, d: distance(key, name) })).sort((a, b) => a.d - b.d)[0];
  return best && best.d <= Math.max(1, Math.floor(best.name.length / 3)) ? best.name : undefined;
}

export class Fields {
  readonly issues: Issues;
  readonly path: string;
  readonly #value: Record<string, unknown>;

  private constructor(issues: Issues, path: string, value: Record<string, unknown>) {
    this.issues = issues;
    this.path = path;
    this.#value = value;
  }

  /** The fields of `value`, or undefined (reported) when it is not a mapping. Unknown keys are reported. */
  static of(issues: Issues, path: string, value: unknown, allowed: readonly string[]): Fields | undefined {
    if (!isMapping(value)) {
      issues.add(path, `must be a mapping, got ${describeValue(value)}`);
      return undefined;
    }
    for (const key of Object.keys(value)) {
      if (allowed.includes(key)) continue;
      const near = suggestion(key, allowed);
      issues.add(childPath(path, key), `unknown key${near ? ` (did you mean "${near}"?)` : ''}; allowed keys: ${allowed.join(', ')}`);
    }
    return new Fields(issues, path, value);
  }

  at(key: string): string {
    return childPath(this.path, key);
  }

  has(key: string): boolean {
    return this.#value[key] !== undefined;
  }

  raw(key: string): unknown {
    return this.#value[key];
  }

  string(key: string, rule: StringRule = {}): string | undefined {
    return this.has(key) ? readString(this.issues, this.at(key), this.#value[key], rule) : undefined;
  }

  requiredString(key: string, rule: StringRule = {}): string | undefined {
    if (!this.has(key)) {
      this.issues.add(this.at(key), 'is required');
      return undefined;
    }
    return this.string(key, rule);
  }

  /** A string, `null` when explicitly set to null (clears the value), undefined when absent. */
  nullableString(key: string, rule: StringRule = {}): string | null | undefined {
    if (this.#value[key] === null) return null;
    return this.string(key, rule);
  }

  boolean(key: string): boolean | undefined {
    if (!this.has(key)) return undefined;
    const value = this.#value[key];
    if (typeof value === 'boolean') return value;
    this.issues.add(this.at(key), `must be true or false, got ${describeValue(value)}`);
    return undefined;
  }

  enumValue<T extends string>(key: string, allowed: readonly T[]): T | undefined {
    return this.has(key) ? readEnum(this.issues, this.at(key), this.#value[key], allowed) : undefined;
  }

  requiredEnum<T extends string>(key: string, allowed: readonly T[]): T | undefined {
    if (this.has(key)) return this.enumValue(key, allowed);
    this.issues.add(this.at(key), `is required (one of ${allowed.map((v) => JSON.stringify(v)).join(', ')})`);
    return undefined;
  }

  /** A list whose items are read by `item`; items that fail are left out (and reported). */
  list<T>(key: string, item: (value: unknown, path: string, index: number) => T | undefined): T[] | undefined {
    if (!this.has(key)) return undefined;
    const value = this.#value[key];
    if (!Array.isArray(value)) {
      this.issues.add(this.at(key), `must be a list, got ${describeValue(value)}`);
      return undefined;
    }
    const result: T[] = [];
    value.forEach((entry: unknown, index) => {
      const read = item(entry, childPath(this.at(key), index), index);
      if (read !== undefined) result.push(read);
    });
    return result;
  }

  /** A list of strings without duplicates. */
  stringList(key: string, item: (value: unknown, path: string) => string | undefined): string[] | undefined {
    const seen = new Map<string, number>();
    return this.list(key, (value, path, index) => {
      const read = item(value, path);
      if (read === undefined) return undefined;
      const first = seen.get(read);
      if (first !== undefined) {
        this.issues.add(path, `duplicates ${childPath(this.at(key), first)} (${JSON.stringify(read)})`);
        return undefined;
      }
      seen.set(read, index);
      return read;
    });
  }
}
