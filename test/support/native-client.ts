/**
 * What a command-line relying party brings to a sign-in (RFC 8252 §7.3): a listener on a loopback
 * port the system picks at run time, where the browser delivers the authorization response, and
 * git-credential-oauth 0.4.2's PKCE verifier, standard base64 with `+`, `/` and `=`.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';

export interface LoopbackListener {
  port: number;
  /** The query of the first request the listener receives. */
  query: Promise<URLSearchParams>;
  close(): Promise<void>;
}

export async function loopbackListener(): Promise<LoopbackListener> {
  let deliver: (query: URLSearchParams) => void = () => {};
  const query = new Promise<URLSearchParams>((resolve) => (deliver = resolve));
  const listener = http.createServer((req, res) => {
    deliver(new URL(req.url ?? '/', 'http://127.0.0.1').searchParams);
    res.writeHead(200, { 'content-type': 'text/html', connection: 'close' }).end('<p>Success. You may close this page.</p>');
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const address = listener.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    query,
    close: () =>
      new Promise<void>((resolve) => {
        listener.closeAllConnections();
        listener.close(() => resolve());
      }),
  };
}

/** Standard base64 of 32 random bytes, the first six chosen so that it starts with "++++////" and ends with "=". */
export function base64Verifier(): string {
  return Buffer.concat([Buffer.from([0xfb, 0xef, 0xbe, 0xff, 0xff, 0xff]), randomBytes(26)]).toString('base64');
}

/** RFC 7636 §4.2: BASE64URL(SHA256(verifier)), the challenge every client sends. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}
