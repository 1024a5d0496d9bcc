/**
 * Where a JSON text stops being JSON (RFC 8259), as a line and a column, for the answer to a request
 * body that does not parse (docs/errors.md#the-api). JSON.parse says where only for some mistakes and
 * in words that quote the client's text; this scanner finds the first offending character itself.
 * It runs only after JSON.parse refused the text, and keeps its own stack, so that a deeply nested
 * body cannot exhaust the call stack.
 */

export interface TextPosition {
  /** 1-based. */
  line: number;
  /** 1-based, in UTF-16 code units, as editors count them. */
  column: number;
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const HEX4 = /[0-9a-fA-F]{4}/y;

/** The answer to a request body JSON.parse refused: `request body is not valid JSON: line 3, column 5`. */
export function notValidJson(text: string): string {
  const at = jsonSyntaxErrorAt(text);
  return at === undefined ? 'request body is not valid JSON' : `request body is not valid JSON: line ${at.line}, column ${at.column}`;
}

/** The position of the first character that is not JSON, or of the end when the text ends early; undefined for valid JSON. */
export function jsonSyntaxErrorAt(text: string): TextPosition | undefined {
  const offset = firstErrorOffset(text);
  return offset === undefined ? undefined : positionOf(text, offset);
}

function positionOf(text: string, offset: number): TextPosition {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    if (text[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** What may come next: a value, the first value or `]`, the first key or `}`, a key, a colon, `,` or the container's end, nothing more. */
type Expect = 'value' | 'first-value' | 'first-key' | 'key' | 'colon' | 'next' | 'end';

function firstErrorOffset(text: string): number | undefined {
  const open: Array<'{' | '['> = [];
  let i = 0;
  let expect: Expect = 'value';
  const closed = (): void => {
    open.pop();
    i++;
    expect = open.length === 0 ? 'end' : 'next';
  };
  for (;;) {
    while (i < text.length && WHITESPACE.has(text[i]!)) i++;
    const c = text[i];
    if (expect === 'end') return c === undefined ? undefined : i;
    if (c === undefined) return i;
    if ((expect === 'first-value' && c === ']') || (expect === 'first-key' && c === '}')) {
      closed();
      continue;
    }
    switch (expect) {
      case 'colon':
        if (c !== ':') return i;
        i++;
        expect = 'value';
        continue;
      case 'next': {
        const container = open[open.length - 1];
        if (c === ',') {
          i++;
          expect = container === '{' ? 'key' : 'value';
        } else if ((c === '}' && container === '{') || (c === ']' && container === '[')) closed();
        else return i;
        continue;
      }
      case 'first-key':
      case 'key': {
        if (c !== '"') return i;
        const mistake = scanString(text, i);
        if (typeof mistake === 'object') return mistake.at;
        i = mistake;
        expect = 'colon';
        continue;
      }
      case 'value':
      case 'first-value':
        if (c === '{' || c === '[') {
          open.push(c);
          i++;
          expect = c === '{' ? 'first-key' : 'first-value';
          continue;
        }
        if (c === '"') {
          const mistake = scanString(text, i);
          if (typeof mistake === 'object') return mistake.at;
          i = mistake;
        } else if (c === '-' || (c >= '0' && c <= '9')) {
          NUMBER.lastIndex = i;
          if (!NUMBER.test(text)) return c === '-' ? i + 1 : i;
          i = NUMBER.lastIndex;
        } else {
          const word = ['true', 'false', 'null'].find((w) => text.startsWith(w, i));
          if (word === undefined) return i;
          i += word.length;
        }
        expect = open.length === 0 ? 'end' : 'next';
    }
  }
}

/** Scans the string whose quote is at `start`: the offset after its closing quote, or where it goes wrong. */
function scanString(text: string, start: number): number | { at: number } {
  let i = start + 1;
  for (;;) {
    const c = text[i];
    if (c === undefined || c < ' ') return { at: i };
    if (c === '"') return i + 1;
    if (c !== '\\') {
      i++;
      continue;
    }
    const escaped = text[i + 1];
    if (escaped === 'u') {
      HEX4.lastIndex = i + 2;
      if (!HEX4.test(text)) return { at: i + 2 };
      i += 6;
    } else if (escaped !== undefined && '"\\/bfnrt'.includes(escaped)) i += 2;
    else return { at: i + 1 };
  }
}
