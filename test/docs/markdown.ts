/**
 * What the docs test reads out of Markdown: fenced code blocks (with the skip marker before them),
 * relative links, headings and their GitHub anchors, and the expected-output comments of the shell
 * examples, written as loose JSON (`…` stands for anything) and matched against real answers.
 */

export interface CodeBlock {
  /** The fence's info string, first word: `sh`, `ts`, `text`, `yaml`. */
  lang: string;
  /** 1-based line of the opening fence. */
  line: number;
  body: string;
  /** The reason of a `<!-- docs-test: skip (reason) -->` line right before the fence. */
  skip: string | undefined;
}

const SKIP = /^<!--\s*docs-test:\s*skip\s*\((.+)\)\s*-->$/;

export function codeBlocks(markdown: string): CodeBlock[] {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(```+|~~~+)\s*([\w-]*)/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    let previous = i - 1;
    while (previous >= 0 && lines[previous]!.trim() === '') previous--;
    const skip = previous >= 0 ? SKIP.exec(lines[previous]!.trim())?.[1] : undefined;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !lines[j]!.startsWith(fence); j++) body.push(lines[j]!);
    blocks.push({ lang: open[2] ?? '', line: i + 1, body: body.join('\n'), skip });
    i = j;
  }
  return blocks;
}

/** The text outside fenced blocks and inline code, where links and headings live. */
function prose(markdown: string): string[] {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const marker = /^(```+|~~~+)/.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker !== undefined && line.startsWith(fence)) fence = undefined;
      out.push('');
      continue;
    }
    if (marker !== undefined) {
      fence = marker;
      out.push('');
      continue;
    }
    out.push(line.replace(/`[^`]*`/g, '``'));
  }
  return out;
}

export interface Link {
  target: string;
  line: number;
}

/** Inline links and images: `[text](target)`, `![alt](target)`. */
export function links(markdown: string): Link[] {
  const found: Link[] = [];
  prose(markdown).forEach((line, index) => {
    for (const match of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) found.push({ target: match[1]!, line: index + 1 });
  });
  return found;
}

/** GitHub's anchor of a heading: inline markup dropped, lower case, punctuation dropped, spaces to dashes. */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor the headings of a page give, numbered as GitHub numbers repeats (`-1`, `-2`). */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  const lines = markdown.split('\n');
  let fence: string | undefined;
  for (const line of lines) {
    const marker = /^(```+|~~~+)/.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker !== undefined && line.startsWith(fence)) fence = undefined;
      continue;
    }
    if (marker !== undefined) {
      fence = marker;
      continue;
    }
    const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Expected output written as loose JSON: `{"active":true,"scope":"openid urn:…",…}`. A `…` (or
// `...`) stands for any value, for more members of an object or more items of an array, and inside
// a string for any text; `<words>` inside a string stands for any text too.

export type Pattern =
  | { kind: 'any' }
  | { kind: 'object'; members: Array<{ key: string; value: Pattern }>; open: boolean }
  | { kind: 'array'; items: Pattern[]; open: boolean }
  | { kind: 'text'; pattern: string }
  | { kind: 'literal'; value: number | boolean | null };

class PatternParser {
  private at = 0;
  private readonly source: string;

  constructor(source: string) {
    this.source = source;
  }

  parse(): Pattern {
    const value = this.value();
    this.space();
    if (this.at !== this.source.length) throw new Error(`unexpected ${JSON.stringify(this.source.slice(this.at, this.at + 10))} in ${this.source}`);
    return value;
  }

  private space(): void {
    while (this.at < this.source.length && /\s/.test(this.source[this.at]!)) this.at++;
  }

  private ellipsis(): boolean {
    this.space();
    for (const token of ['…', '...']) {
      if (this.source.startsWith(token, this.at)) {
        this.at += token.length;
        return true;
      }
    }
    return false;
  }

  private expect(char: string): void {
    this.space();
    if (this.source[this.at] !== char) throw new Error(`expected ${char} at ${this.at} in ${this.source}`);
    this.at++;
  }

  private peek(): string | undefined {
    this.space();
    return this.source[this.at];
  }

  private string(): string {
    this.expect('"');
    let text = '';
    while (this.at < this.source.length && this.source[this.at] !== '"') {
      if (this.source[this.at] === '\\') {
        text += JSON.parse(`"${this.source.slice(this.at, this.at + 2)}"`) as string;
        this.at += 2;
      } else {
        text += this.source[this.at];
        this.at++;
      }
    }
    this.expect('"');
    return text;
  }

  private value(): Pattern {
    if (this.ellipsis()) return { kind: 'any' };
    const next = this.peek();
    if (next === '{') {
      this.at++;
      const members: Array<{ key: string; value: Pattern }> = [];
      let open = false;
      while (this.peek() !== '}') {
        if (this.ellipsis()) open = true;
        else {
          const key = this.string();
          this.expect(':');
          members.push({ key, value: this.value() });
        }
        if (this.peek() === ',') this.at++;
      }
      this.at++;
      return { kind: 'object', members, open };
    }
    if (next === '[') {
      this.at++;
      const items: Pattern[] = [];
      let open = false;
      while (this.peek() !== ']') {
        if (this.ellipsis()) open = true;
        else items.push(this.value());
        if (this.peek() === ',') this.at++;
      }
      this.at++;
      return { kind: 'array', items, open };
    }
    if (next === '"') return { kind: 'text', pattern: this.string() };
    const literal = /^(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(this.source.slice(this.at));
    if (!literal) throw new Error(`cannot read ${JSON.stringify(this.source.slice(this.at, this.at + 10))} in ${this.source}`);
    this.at += literal[1]!.length;
    return { kind: 'literal', value: JSON.parse(literal[1]!) as number | boolean | null };
  }
}

export function parsePattern(source: string): Pattern {
  return new PatternParser(source).parse();
}

/** A text with `…`, `...` and `<words>` as wildcards, as a regular expression of the whole text. */
export function textMatcher(pattern: string): RegExp {
  const parts = pattern.split(/…|\.\.\.|<[^<>]+>/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[\\s\\S]*')}$`);
}

/** Where `actual` departs from `pattern`, as a list of problems (empty: it matches). */
export function mismatches(pattern: Pattern, actual: unknown, at = '$'): string[] {
  switch (pattern.kind) {
    case 'any':
      return actual === undefined ? [`${at} is missing`] : [];
    case 'literal':
      return actual === pattern.value ? [] : [`${at} is ${JSON.stringify(actual)}, not ${JSON.stringify(pattern.value)}`];
    case 'text':
      return typeof actual === 'string' && textMatcher(pattern.pattern).test(actual)
        ? []
        : [`${at} is ${JSON.stringify(actual)}, not like ${JSON.stringify(pattern.pattern)}`];
    case 'array': {
      if (!Array.isArray(actual)) return [`${at} is not an array: ${JSON.stringify(actual)}`];
      if (!pattern.open) {
        if (actual.length !== pattern.items.length) return [`${at} has ${actual.length} items, not ${pattern.items.length}`];
        return pattern.items.flatMap((item, i) => mismatches(item, actual[i], `${at}[${i}]`));
      }
      let from = 0;
      for (const item of pattern.items) {
        const found = actual.findIndex((value, i) => i >= from && mismatches(item, value).length === 0);
        if (found < 0) return [`${at} has no item like ${JSON.stringify(item)} (in order)`];
        from = found + 1;
      }
      return [];
    }
    case 'object': {
      if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return [`${at} is not an object: ${JSON.stringify(actual)}`];
      const record = actual as Record<string, unknown>;
      const problems: string[] = [];
      const used = new Set<string>();
      for (const member of pattern.members) {
        const key = Object.keys(record).find((name) => !used.has(name) && textMatcher(member.key).test(name));
        if (key === undefined) {
          problems.push(`${at} has no member ${JSON.stringify(member.key)}`);
          continue;
        }
        used.add(key);
        problems.push(...mismatches(member.value, record[key], `${at}.${key}`));
      }
      const extra = Object.keys(record).filter((name) => !used.has(name));
      if (!pattern.open && extra.length > 0) problems.push(`${at} has members the docs do not show: ${extra.join(', ')}`);
      return problems;
    }
  }
}

/** The JSON values in a stretch of output (answers printed back to back, or pretty-printed), in order. */
export function jsonValues(output: string): unknown[] {
  const values: unknown[] = [];
  let i = 0;
  while (i < output.length) {
    const char = output[i];
    if (char !== '{' && char !== '[') {
      i++;
      continue;
    }
    let depth = 0;
    let inString = false;
    let end = -1;
    for (let j = i; j < output.length; j++) {
      const c = output[j];
      if (inString) {
        if (c === '\\') j++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        depth--;
        if (depth === 0) {
          end = j;
          break;
        }
      }
    }
    if (end < 0) break;
    try {
      values.push(JSON.parse(output.slice(i, end + 1)));
      i = end + 1;
    } catch {
      i++;
    }
  }
  return values;
}
