/**
 * Connection limits (docs/security.md 10.8; slowloris): the one listener closes silent,
 * slow and idle connections over cleartext HTTP/1.1, h2c and TLS, never one whose request is being
 * served, and answers an oversized body with a 413 that ordinary clients can read.
 * The listener is started with small limits so that each case takes a second or two; one case
 * checks the defaults on the real server. The cases on the small listeners run at once: each has a
 * connection of its own and mostly waits for a limit (one after another they took 16 s).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { CONNECTION_LIMITS, listen, type ConnectionLimits, type Listener } from '../../src/server/listen.ts';
import { fixture } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';

const LIMITS: ConnectionLimits = { headersMs: 1200, requestMs: 2000, silentMs: 600, keepAliveMs: 500, h2IdleMs: 800, drainBytes: 1024 * 1024, drainMs: 2000 };
/**
 * How late a limit may close a connection and still pass: timers fire late on a busy machine (a
 * 600 ms limit was seen closing after 1,858 ms while the rest of the suite ran). A connection the
 * limit did not cover stays open for the default limits (CONNECTION_LIMITS: 5 s for keep-alive, 10 s
 * and more for the others), so each limit plus this slack still tells the limit from its absence.
 */
const LATE_MS = 4000;

/** Answers after `delay` ms (query `?delay=`), reading the body first; 413 for `/big` without reading. */
function handler(req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  if (url.pathname === '/big') {
    res.statusCode = 413;
    res.end('too large');
    return;
  }
  req.resume();
  req.on('end', () => {
    setTimeout(() => res.end('ok'), Number(url.searchParams.get('delay') ?? 0));
  });
}

/** Resolves with the milliseconds until the server closed the socket (or the error that ended it). */
function closedAfter(socket: net.Socket): Promise<number> {
  const started = Date.now();
  return new Promise((resolve) => {
    socket.on('error', () => {});
    socket.on('close', () => resolve(Date.now() - started));
    socket.resume(); // a paused socket would never see the server's end
  });
}

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Writes one byte of `text` every `everyMs` until the socket closes. */
function dribble(socket: net.Socket, text: string, everyMs: number): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || i >= text.length) return clearInterval(timer);
    socket.write(text[i++]!);
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
}

let dir: string;
let cert: { cert: string; key: string };
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-conn-'));
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
  ], { stdio: 'ignore' });
  cert = { cert: path.join(dir, 'cert.pem'), key: path.join(dir, 'key.pem') };
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('cleartext and h2c (docs/security.md 10.8)', () => {
  let listener: Listener;
  beforeAll(async () => {
    listener = await listen({ host: '127.0.0.1', port: 0, http1: handler, http2: handler, limits: LIMITS });
  });
  afterAll(() => listener.close(100));

  it.concurrent('closes a connection that sends no byte', async () => {
    const socket = await connect(listener.port);
    const ms = await closedAfter(socket);
    expect(ms).toBeGreaterThanOrEqual(LIMITS.silentMs - 50);
    expect(ms).toBeLessThan(LIMITS.silentMs + LATE_MS);
  });

  it.concurrent('closes a connection whose headers trickle in (slowloris), though every byte beats the silence limit', async () => {
    const socket = await connect(listener.port);
    dribble(socket, 'GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'a'.repeat(200), 100);
    const ms = await closedAfter(socket);
    expect(ms).toBeGreaterThanOrEqual(LIMITS.headersMs - 50);
    expect(ms).toBeLessThan(LIMITS.headersMs + LATE_MS);
  });

  it.concurrent('closes a connection whose body trickles in past the request limit', async () => {
    const socket = await connect(listener.port);
    socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n');
    dribble(socket, 'b'.repeat(500), 100);
    const ms = await closedAfter(socket);
    expect(ms).toBeGreaterThanOrEqual(LIMITS.requestMs - 50);
    expect(ms).toBeLessThan(LIMITS.requestMs + LATE_MS);
  });

  it.concurrent('closes a keep-alive connection idle between requests', async () => {
    const socket = await connect(listener.port);
    const closed = closedAfter(socket);
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const ms = await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer).toMatch(/keep-alive: timeout=0/i); // what the client is told: our limit, in whole seconds
    // Node keeps the socket one second past the announced limit, so a client reusing it at the
    // last moment does not meet a closed socket (http.Server keepAliveTimeoutBuffer).
    expect(ms).toBeLessThan(LIMITS.keepAliveMs + LATE_MS);
  });

  it.concurrent('keeps a connection whose request is still being served, however quiet the client is', async () => {
    const agent = new http.Agent({ keepAlive: false });
    const body = await new Promise<string>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port: listener.port, path: `/?delay=${LIMITS.silentMs * 2}`, agent }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve(text));
      }).on('error', reject);
    });
    expect(body).toBe('ok');
  });

  it.concurrent('closes an h2c connection that never sends the preface', async () => {
    const socket = await connect(listener.port);
    socket.write('PRI * HTTP/2.0\r\n');
    const ms = await closedAfter(socket);
    expect(ms).toBeLessThan(LIMITS.h2IdleMs + LATE_MS);
  });

  it.concurrent('closes an idle HTTP/2 session, after serving it', async () => {
    const session = http2.connect(`http://127.0.0.1:${listener.port}`);
    session.on('error', () => {});
    const status = await new Promise<number>((resolve, reject) => {
      const stream = session.request({ ':path': '/' });
      stream.on('response', (headers) => resolve(Number(headers[':status'])));
      stream.on('error', reject);
      stream.end();
      stream.resume();
    });
    expect(status).toBe(200);
    const started = Date.now();
    await new Promise<void>((resolve) => session.once('close', () => resolve()));
    expect(Date.now() - started).toBeLessThan(LIMITS.h2IdleMs + LATE_MS);
  });

  it.concurrent('cancels an HTTP/2 stream whose body does not arrive in time', async () => {
    const session = http2.connect(`http://127.0.0.1:${listener.port}`);
    session.on('error', () => {});
    const stream = session.request({ ':path': '/', ':method': 'POST' });
    stream.on('error', () => {});
    const timer = setInterval(() => stream.write('x'), 100); // keeps the session busy, never ends the body
    const outcome = await new Promise<string>((resolve) => {
      stream.on('response', (headers) => resolve(String(headers[':status'])));
      stream.on('close', () => resolve('closed'));
    });
    clearInterval(timer);
    session.destroy();
    expect(outcome).toBe('408');
  });

  it.concurrent('answers 413 so that a Node client uploading 5 MB reads it, then closes', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: listener.port, path: '/big', method: 'POST', headers: { 'content-type': 'application/octet-stream' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(Buffer.alloc(5 * 1024 * 1024 / 8)); // 640 KiB: within the drain budget, so the upload completes cleanly
    });
    expect(status).toBe(413);
  });
});

describe('TLS (docs/security.md 10.8)', () => {
  let listener: Listener;
  beforeAll(async () => {
    listener = await listen({ host: '127.0.0.1', port: 0, tls: cert, http1: handler, http2: handler, limits: LIMITS });
  });
  afterAll(() => listener.close(100));

  it.concurrent('closes a TCP connection that never starts the handshake', async () => {
    const socket = await connect(listener.port);
    const ms = await closedAfter(socket);
    expect(ms).toBeLessThan(LIMITS.silentMs + LATE_MS);
  });

  it.concurrent('closes a TLS connection that sends no request', async () => {
    const socket = await new Promise<tls.TLSSocket>((resolve, reject) => {
      const s = tls.connect({ host: '127.0.0.1', port: listener.port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () => resolve(s));
      s.once('error', reject);
    });
    const ms = await closedAfter(socket);
    expect(ms).toBeLessThan(LIMITS.silentMs + LATE_MS);
  });

  it.concurrent('closes a TLS connection whose headers trickle in', async () => {
    const socket = await new Promise<tls.TLSSocket>((resolve, reject) => {
      const s = tls.connect({ host: '127.0.0.1', port: listener.port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () => resolve(s));
      s.once('error', reject);
    });
    const closed = closedAfter(socket);
    dribble(socket, 'GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'a'.repeat(200), 100);
    expect(await closed).toBeLessThan(LIMITS.headersMs + LATE_MS);
  });

  it.concurrent('closes an idle HTTP/2 session over TLS', async () => {
    const session = http2.connect(`https://127.0.0.1:${listener.port}`, { rejectUnauthorized: false });
    session.on('error', () => {});
    const started = Date.now();
    await new Promise<void>((resolve) => session.once('close', () => resolve()));
    expect(Date.now() - started).toBeLessThan(LIMITS.h2IdleMs + LATE_MS);
  });
});

describe('the real server (docs/security.md 10.8 defaults)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(fixture().document);
  });
  afterAll(() => server.stop());

  it('uses the limits docs/security.md 10.8 names', () => {
    expect(CONNECTION_LIMITS).toEqual({ headersMs: 20_000, requestMs: 30_000, silentMs: 10_000, keepAliveMs: 5_000, h2IdleMs: 60_000, drainBytes: 1024 * 1024, drainMs: 2_000 });
  });

  /** Node's own http client sends 5 MB; interop issue item 7: it must read the 413, not EPIPE / ECONNRESET. */
  async function upload(pathname: string, contentType: string, declareLength: boolean): Promise<{ status: number; body: string }> {
    const body = Buffer.alloc(5 * 1024 * 1024, 'a');
    return new Promise((resolve, reject) => {
      const url = new URL(pathname, server.url);
      const headers: Record<string, string> = { 'content-type': contentType };
      if (!declareLength) headers['transfer-encoding'] = 'chunked';
      const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: url.pathname.startsWith('/v2/') ? 'PUT' : 'POST', headers }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
      if (declareLength) req.setHeader('content-length', String(body.length));
      // in pieces, as a streaming upload would, so the server answers while the client is still sending
      let offset = 0;
      const next = () => {
        while (offset < body.length) {
          const piece = body.subarray(offset, offset + 64 * 1024);
          offset += piece.length;
          if (!req.write(piece)) return void req.once('drain', next);
        }
        req.end();
      };
      next();
    });
  }

  it.each([
    ['/oauth/v2/token', 'application/x-www-form-urlencoded', true],
    ['/oauth/v2/token', 'application/x-www-form-urlencoded', false],
    ['/v2/features/instance', 'application/json', true],
    ['/v2/features/instance', 'application/json', false],
  ])('a 5 MB body to %s (%s, declared length %s) gets a 413 that Node\'s http client reads', async (pathname, type, declared) => {
    const reply = await upload(pathname, type, declared);
    expect(reply.status).toBe(413);
    expect(reply.body.length).toBeGreaterThan(0);
  });
});
