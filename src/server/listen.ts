/**
 * The one listener (docs/endpoints.md#one-port-four-protocols). Cleartext: each connection is sniffed
 * for the HTTP/2 prior-knowledge preface and handed to the h2c server (gRPC and Connect over h2) or
 * to the HTTP/1.1 server (Express, REST, Connect, gRPC-web). TLS: ALPN picks h2 for clients that
 * offer only h2 (gRPC clients) and http/1.1 for clients that offer both (browsers), because Express
 * cannot run on HTTP/2.
 *
 * Connection limits (docs/security.md 10.8), the same for cleartext, h2c and TLS: see ConnectionLimits.
 */
import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

export type Http1Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;
export type Http2Handler = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void;

/** docs/security.md 10.8, in milliseconds and bytes. Tests pass smaller values; the server uses the defaults. */
export interface ConnectionLimits {
  /** Request headers must arrive within this long (HTTP/1.1). */
  headersMs: number;
  /** A whole request (headers and body) must arrive within this long (HTTP/1.1 and each HTTP/2 stream). */
  requestMs: number;
  /** A connection that sends no byte this long while no request of it is being served is closed; also the TLS handshake budget. */
  silentMs: number;
  /** Idle time allowed between keep-alive requests (HTTP/1.1). */
  keepAliveMs: number;
  /** An HTTP/2 session without any activity this long is closed. */
  h2IdleMs: number;
  /** After a 413, the rest of the body is read and discarded up to this many bytes ... */
  drainBytes: number;
  /** ... or this long, so that ordinary clients read the 413 instead of a reset. */
  drainMs: number;
}

export const CONNECTION_LIMITS: ConnectionLimits = {
  headersMs: 20_000,
  requestMs: 30_000,
  silentMs: 10_000,
  keepAliveMs: 5_000,
  h2IdleMs: 60_000,
  drainBytes: 1024 * 1024,
  drainMs: 2_000,
};

export interface ListenOptions {
  host: string;
  port: number;
  tls?: { cert: string; key: string } | undefined;
  http1: Http1Handler;
  http2: Http2Handler;
  limits?: Partial<ConnectionLimits> | undefined;
}

export interface Listener {
  port: number;
  /** Stops accepting, lets in-flight requests finish up to `graceMs`, then closes what is left. */
  close(graceMs: number): Promise<void>;
}

/** ALPN: h2 only for clients that do not offer http/1.1. */
export function chooseProtocol(offered: readonly string[]): string | undefined {
  if (offered.includes('http/1.1')) return 'http/1.1';
  if (offered.includes('h2')) return 'h2';
  return undefined;
}

/**
 * After a 413 the client may still be sending its body. Closing at once would reset the connection
 * with unread data, and Node and browser clients then report the reset instead of the 413; so the
 * rest is read and thrown away, within a budget, and a client that goes on past it is cut off.
 */
function drainRejectedBody(req: http.IncomingMessage, limits: ConnectionLimits): void {
  if (req.complete) return;
  const socket = req.socket;
  let drained = 0;
  const cutOff = () => socket.destroy();
  const timer = setTimeout(cutOff, limits.drainMs);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > limits.drainBytes) cutOff();
  });
  req.once('end', () => {
    clearTimeout(timer);
    socket.end(); // the body is read: close in order, so the client sees the 413 and then a clean end
  });
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

export async function listen(options: ListenOptions): Promise<Listener> {
  const limits: ConnectionLimits = { ...CONNECTION_LIMITS, ...options.limits };
  const h1 = http.createServer({
    keepAliveTimeout: limits.keepAliveMs,
    headersTimeout: limits.headersMs,
    requestTimeout: limits.requestMs,
    connectionsCheckingInterval: Math.min(1000, limits.headersMs / 2),
  });
  // Node enforces headersTimeout and requestTimeout with a periodic check that it starts when its
  // server emits 'listening'. This server never listens itself (the one listener below feeds it
  // sockets), so start the check here; without it a slowloris client is never cut off.
  h1.emit('listening');

  const h2 = http2.createServer({}, (req, res) => {
    // docs/security.md 10.8: each stream's request must arrive within requestMs, as on HTTP/1.1.
    if (!req.complete) {
      const deadline = setTimeout(() => {
        if (req.complete) return;
        const cancel = () => req.stream.close(http2.constants.NGHTTP2_CANCEL); // stop the body coming
        if (res.headersSent) return cancel();
        res.once('finish', cancel); // after the 408 is out, or the client would never read it
        res.writeHead(408, { 'content-type': 'application/json' }).end('{"error":"request_timeout","error_description":"the request did not arrive in time"}');
      }, limits.requestMs);
      deadline.unref();
      req.once('end', () => clearTimeout(deadline));
      res.once('close', () => clearTimeout(deadline));
    }
    options.http2(req, res);
  });
  const sockets = new Set<net.Socket>();
  const h2Sessions = new Set<http2.Http2Session>();
  h2.on('session', (session) => {
    h2Sessions.add(session);
    session.on('close', () => h2Sessions.delete(session));
    // docs/security.md 10.8: an idle HTTP/2 session is closed (GOAWAY), and destroyed if a stream
    // still hangs on. A session with a stream open is not idle, however quiet: a health Watch waits
    // for a change for minutes (such streams are capped per address and end after their maximum age),
    // and a stream whose request is slow to arrive has its own deadline above.
    let open = 0;
    session.on('stream', (stream: http2.ServerHttp2Stream) => {
      open += 1;
      stream.once('close', () => (open -= 1));
    });
    const idle = (): void => {
      if (open > 0) return void session.setTimeout(limits.h2IdleMs, idle);
      session.close();
      setTimeout(() => session.destroy(), 1000).unref();
    };
    session.setTimeout(limits.h2IdleMs, idle);
  });
  // HTTP/1.1 connections handed over with emit('connection') are not tracked by the server's own
  // close(), so count requests in flight per socket ourselves (shutdown and the silence rule need it).
  const inFlight = new WeakMap<net.Socket, number>();
  let closing = false;
  h1.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    if (closing) res.shouldKeepAlive = false;
    res.once('finish', () => {
      if (res.statusCode === 413) drainRejectedBody(req, limits);
    });
    res.once('close', () => {
      const left = (inFlight.get(socket) ?? 1) - 1;
      inFlight.set(socket, left);
      if (closing && left === 0) socket.destroySoon();
    });
    options.http1(req, res);
  });
  // A socket timeout on an HTTP/1.1 connection: Node would destroy the socket even while a request
  // of it is being served (a slow database); only a connection that is silent and idle is closed.
  h1.on('timeout', (socket: net.Socket) => {
    if ((inFlight.get(socket) ?? 0) === 0) socket.destroy();
  });

  /** docs/security.md 10.8: no byte for silentMs (before the protocol is known, or on an idle HTTP/1.1 connection) closes it. */
  const watchSilence = (socket: net.Socket) => {
    socket.setTimeout(limits.silentMs);
    socket.on('timeout', () => {
      if (h2Owned.has(socket) || (inFlight.get(socket) ?? 0) > 0) return;
      socket.destroy();
    });
  };
  const handToH2 = (socket: net.Socket) => {
    h2Owned.add(socket);
    socket.setTimeout(0); // HTTP/2 sessions have their own idle limit
    h2.emit('connection', socket);
  };

  const h2Owned = new WeakSet<net.Socket>();
  const dispatchCleartext = (socket: net.Socket) => {
    socket.once('readable', () => {
      const head: Buffer | null = socket.read(PREFACE.length) ?? socket.read();
      if (head === null) {
        socket.once('readable', () => dispatchCleartext(socket));
        return;
      }
      socket.unshift(head);
      const isH2 = head.length >= 3 && PREFACE.subarray(0, Math.min(head.length, PREFACE.length)).equals(head.subarray(0, Math.min(head.length, PREFACE.length)));
      if (isH2) handToH2(socket);
      else h1.emit('connection', socket);
    });
  };
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };

  /** TLS: the raw connections, so that shutdown can end those still in their handshake. */
  const handshaking = new Set<net.Socket>();
  let server: net.Server;
  if (options.tls) {
    server = tls.createServer({
      cert: fs.readFileSync(options.tls.cert),
      key: fs.readFileSync(options.tls.key),
      ALPNCallback: ({ protocols }) => chooseProtocol(protocols),
      handshakeTimeout: limits.silentMs,
    });
    server.on('secureConnection', (socket: tls.TLSSocket) => {
      track(socket);
      if (socket.alpnProtocol === 'h2') handToH2(socket);
      else {
        watchSilence(socket);
        h1.emit('connection', socket);
      }
    });
    // A failed or timed-out handshake (handshakeTimeout: a client that never says hello) must end
    // the connection: with a listener here Node leaves that to us, and the socket would stay open.
    server.on('tlsClientError', (_error: Error, socket: tls.TLSSocket) => socket.destroy());
    server.on('connection', (raw: net.Socket) => {
      handshaking.add(raw);
      raw.on('close', () => handshaking.delete(raw));
    });
  } else {
    server = net.createServer((socket) => {
      track(socket);
      watchSilence(socket);
      dispatchCleartext(socket);
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;

  return {
    port,
    async close(graceMs: number) {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      h1.close(() => {}); // stops the header/request deadline check; h1 itself never listened
      for (const socket of sockets) {
        if (socket instanceof tls.TLSSocket ? socket.alpnProtocol === 'h2' : h2Owned.has(socket)) continue;
        if ((inFlight.get(socket) ?? 0) === 0) socket.destroySoon();
      }
      for (const session of h2Sessions) session.close();
      const deadline = setTimeout(() => {
        for (const socket of sockets) socket.destroy();
        for (const raw of handshaking) raw.destroy();
      }, graceMs);
      deadline.unref();
      await closed;
      clearTimeout(deadline);
    },
  };
}
