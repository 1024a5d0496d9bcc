/**
 * Reading OAuth requests and the login UI's forms: application/x-www-form-urlencoded bodies
 * (RFC 6749 §3.2), parsed once, with repeated parameters rejected (RFC 6749 §3.1: parameters MUST NOT
 * be included more than once) and a size bound. Only the parameters a step reads are ever taken
 * from the result. The scope parameter's grammar is OAuth's alone (oauth/scopes.ts parseScope).
 */
import type { IncomingMessage } from 'node:http';
import type { Request } from 'express';
import { InvalidRequest } from './errors.ts';

export type Params = ReadonlyMap<string, string>;

const FORM_TYPE = 'application/x-www-form-urlencoded';

/** Reads the raw body with a size bound; 413 past it. */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw new InvalidRequest('request body is too large', 413);
  // Events, not `for await`: leaving an async iterator early destroys the request and with it the
  // socket, and the client would see a reset instead of the 413 (the listener drains the rest,
  // docs/security.md 10.8).
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        req.off('data', onData).off('end', onEnd).off('error', reject);
        req.pause();
        reject(new InvalidRequest('request body is too large', 413));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => resolve(Buffer.concat(chunks));
    req.on('data', onData).once('end', onEnd).once('error', reject);
  });
}

export function parseParams(text: string): Map<string, string> {
  const { params, repeated } = parseParamsKeepingFirst(text);
  if (repeated[0] !== undefined) throw new InvalidRequest(`${repeated[0]} is repeated`);
  return params;
}

/**
 * application/x-www-form-urlencoded, strictly: URLSearchParams decodes malformed percent-escapes and
 * invalid UTF-8 leniently (into U+FFFD), which would let garbage pass for a value; here either is
 * invalid_request.
 */
/** One name or value of a form: `+` is a space, then percent-decoding; most have neither, and are taken as they are. */
function formDecode(raw: string): string {
  return raw.includes('%') || raw.includes('+') ? decodeURIComponent(raw.replace(/\+/g, ' ')) : raw;
}

function* strictPairs(text: string): Generator<[string, string]> {
  if (text === '') return;
  for (const part of text.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawKey = eq === -1 ? part : part.slice(0, eq);
    const rawValue = eq === -1 ? '' : part.slice(eq + 1);
    let pair: [string, string];
    try {
      pair = [formDecode(rawKey), formDecode(rawValue)];
    } catch {
      throw new InvalidRequest('request parameters are not correctly percent-encoded UTF-8');
    }
    // No OAuth parameter has a use for U+0000, and PostgreSQL text cannot hold it.
    if (pair[0].includes('\0') || pair[1].includes('\0')) throw new InvalidRequest('request parameters must not contain NUL characters');
    yield pair;
  }
}

export interface ParsedParams {
  /** The first value of each parameter. */
  params: Map<string, string>;
  /** The names that came more than once. */
  repeated: string[];
  /** Every value of each repeated parameter, in order. */
  lists: Map<string, string[]>;
}

export function parseParamsKeepingFirst(text: string): ParsedParams {
  const params = new Map<string, string>();
  const repeated: string[] = [];
  const lists = new Map<string, string[]>();
  for (const [key, value] of strictPairs(text)) {
    const first = params.get(key);
    if (first !== undefined) {
      const list = lists.get(key);
      if (list) list.push(value);
      else {
        lists.set(key, [first, value]);
        repeated.push(key);
      }
      continue;
    }
    params.set(key, value);
  }
  return { params, repeated, lists };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The form body of a POST; a missing body is an empty form. */
export async function readForm(req: IncomingMessage, maxBytes: number): Promise<Map<string, string>> {
  return parseParams(await readFormText(req, maxBytes));
}

/** The form body of a POST with repeated parameters kept, for a caller that allows some to repeat. */
export async function readFormKeepingRepeats(req: IncomingMessage, maxBytes: number): Promise<ParsedParams> {
  return parseParamsKeepingFirst(await readFormText(req, maxBytes));
}

async function readFormText(req: IncomingMessage, maxBytes: number): Promise<string> {
  const type = req.headers['content-type'];
  const body = await readBody(req, maxBytes);
  if (body.length === 0 && type === undefined) return '';
  if (!type || type.split(';')[0]!.trim().toLowerCase() !== FORM_TYPE) {
    throw new InvalidRequest(`content type must be ${FORM_TYPE}`);
  }
  try {
    return utf8.decode(body);
  } catch {
    throw new InvalidRequest('request body is not valid UTF-8');
  }
}

/**
 * Parameters of a GET (query) or POST (form) request, for endpoints that accept both. Repeated
 * parameters are reported, not thrown, so that /authorize can still tell a trusted redirect URI.
 */
export async function readQueryOrForm(req: Request, maxBytes: number): Promise<ParsedParams> {
  if (req.method === 'POST') return parseParamsKeepingFirst(await readFormText(req, maxBytes));
  const query = req.originalUrl.indexOf('?');
  return parseParamsKeepingFirst(query === -1 ? '' : req.originalUrl.slice(query + 1));
}

export function optional(params: Params, name: string): string | undefined {
  const value = params.get(name);
  return value === undefined || value === '' ? undefined : value;
}

export function required(params: Params, name: string): string {
  const value = optional(params, name);
  if (value === undefined) throw new InvalidRequest(`${name} is required`);
  return value;
}
