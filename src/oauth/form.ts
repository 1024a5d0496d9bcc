/**
 * Reading OAuth requests: application/x-www-form-urlencoded bodies (RFC 6749 §3.2), parsed once,
 * with repeated parameters rejected (RFC 6749 §3.1: parameters MUST NOT be included more than once)
 * and a size bound. Only the parameters a step reads are ever taken from the result.
 */
import type { Request } from 'express';
import { InvalidRequest, InvalidScope } from './errors.ts';

export type Params = ReadonlyMap<string, string>;

const FORM_TYPE = 'application/x-www-form-urlencoded';

/** Reads the raw body with a size bound; 413 past it. */
export async function readBody(req: Request, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw new InvalidRequest('request body is too large', 413);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new InvalidRequest('request body is too large', 413);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export function parseParams(text: string): Map<string, string> {
  const params = new Map<string, string>();
  for (const [key, value] of new URLSearchParams(text)) {
    if (params.has(key)) throw new InvalidRequest(`${key} is repeated`);
    params.set(key, value);
  }
  return params;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The form body of a POST; a missing body is an empty form. */
export async function readForm(req: Request, maxBytes: number): Promise<Map<string, string>> {
  const type = req.headers['content-type'];
  const body = await readBody(req, maxBytes);
  if (body.length === 0 && type === undefined) return new Map();
  if (!type || type.split(';')[0]!.trim().toLowerCase() !== FORM_TYPE) {
    throw new InvalidRequest(`content type must be ${FORM_TYPE}`);
  }
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new InvalidRequest('request body is not valid UTF-8');
  }
  return parseParams(text);
}

/** Parameters of a GET (query) or POST (form) request, for endpoints that accept both. */
export async function readQueryOrForm(req: Request, maxBytes: number): Promise<Map<string, string>> {
  if (req.method === 'POST') return readForm(req, maxBytes);
  const query = req.originalUrl.indexOf('?');
  return parseParams(query === -1 ? '' : req.originalUrl.slice(query + 1));
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

/** Space-delimited scope (RFC 6749 §3.3): NQCHAR tokens, duplicates collapsed, order kept. */
export function parseScope(value: string): string[] {
  const scopes = value.split(' ').filter((s) => s !== '');
  for (const scope of scopes) {
    if (!/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(scope)) throw new InvalidScope('scope is malformed');
  }
  return [...new Set(scopes)];
}
