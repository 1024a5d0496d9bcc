/** client_secret_basic (RFC 6749 §2.3.1): id and secret, each form-urlencoded, in HTTP Basic. */
import { InvalidClient, InvalidRequest } from '../errors.ts';

export interface BasicCredentials {
  clientId: string;
  secret: string;
}

export function parseBasic(header: string): BasicCredentials {
  const encoded = header.slice('Basic '.length).trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw new InvalidRequest('authorization header is malformed');
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) throw new InvalidRequest('authorization header is malformed');
  try {
    const clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
    const secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
    if (clientId === '') throw new InvalidClient('empty client id in basic credentials', true);
    if (clientId.includes('\0')) throw new InvalidClient('a client id with NUL names no client', true);
    return { clientId, secret };
  } catch (error) {
    if (error instanceof InvalidClient) throw error;
    throw new InvalidRequest('authorization header is malformed');
  }
}
