/**
 * The one listener (SPEC §2). Cleartext: each connection is sniffed for the HTTP/2 prior-knowledge
 * preface and handed to the h2c server (gRPC and Connect over h2) or to the HTTP/1.1 server (Express,
 * REST, Connect, gRPC-web). TLS: ALPN picks h2 for clients that offer only h2 (gRPC clients) and
 * http/1.1 for clients that offer both (browsers), because Express cannot run on HTTP/2.
 */
import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

export type Http1Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;
export type Http2Handler = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void;

export interface ListenOptions {
  host: string;
  port: number;
  tls?: { cert: string; key: string } | undefined;
  http1: Http1Handler;
  http2: Http2Handler;
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

export async function listen(options: ListenOptions): Promise<Listener> {
  const h1 = http.createServer({ keepAliveTimeout: 65_000, requestTimeout: 30_000, headersTimeout: 20_000 }, options.http1);
  const h2 = http2.createServer({}, options.http2);
  const sockets = new Set<net.Socket>();
  const h2Sessions = new Set<http2.Http2Session>();
  h2.on('session', (session) => {
    h2Sessions.add(session);
    session.on('close', () => h2Sessions.delete(session));
  });
  // HTTP/1.1 connections handed over with emit('connection') are not tracked by the server, so
  // closeIdleConnections() cannot see them: count requests in flight per socket ourselves.
  const inFlight = new WeakMap<net.Socket, number>();
  let closing = false;
  h1.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    if (closing) res.shouldKeepAlive = false;
    res.once('close', () => {
      const left = (inFlight.get(socket) ?? 1) - 1;
      inFlight.set(socket, left);
      if (closing && left === 0) socket.destroySoon();
    });
  });

  const h2Owned = new WeakSet<net.Socket>();
  const dispatchCleartext = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.once('readable', () => {
      const head: Buffer | null = socket.read(PREFACE.length) ?? socket.read();
      if (head === null) {
        socket.once('readable', () => dispatchCleartext(socket));
        return;
      }
      socket.unshift(head);
      const isH2 = head.length >= 3 && PREFACE.subarray(0, Math.min(head.length, PREFACE.length)).equals(head.subarray(0, Math.min(head.length, PREFACE.length)));
      if (isH2) h2Owned.add(socket);
      (isH2 ? h2 : h1).emit('connection', socket);
    });
  };

  let server: net.Server;
  if (options.tls) {
    server = tls.createServer({
      cert: fs.readFileSync(options.tls.cert),
      key: fs.readFileSync(options.tls.key),
      ALPNCallback: ({ protocols }) => chooseProtocol(protocols),
    });
    server.on('secureConnection', (socket: tls.TLSSocket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      (socket.alpnProtocol === 'h2' ? h2 : h1).emit('connection', socket);
    });
    server.on('tlsClientError', () => {});
  } else {
    server = net.createServer(dispatchCleartext);
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
      for (const socket of sockets) {
        if (socket instanceof tls.TLSSocket ? socket.alpnProtocol === 'h2' : h2Owned.has(socket)) continue;
        if ((inFlight.get(socket) ?? 0) === 0) socket.destroySoon();
      }
      for (const session of h2Sessions) session.close();
      const deadline = setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, graceMs);
      deadline.unref();
      await closed;
      clearTimeout(deadline);
    },
  };
}
