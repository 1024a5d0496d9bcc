/**
 * A free TCP port on the loopback interface, for a server that must know its URL before it listens.
 *
 * Not a port the kernel picks (`listen(0)`): those come from the ephemeral range, which every
 * outgoing connection draws its local port from too, so between our probe and the server's listen
 * a connection to PostgreSQL could take the port (seen as EADDRINUSE in a full run). Ports are drawn
 * below the ephemeral range instead, each jest worker from its own block, one after another, and
 * each is probed by listening on it before it is handed out.
 */
import fs from 'node:fs';
import net from 'node:net';

const BLOCK = 1500;

function firstEphemeralPort(): number {
  try {
    const [low] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const port = Number(low);
    return Number.isInteger(port) && port > 12000 ? port : 32768;
  } catch {
    return 32768;
  }
}

const ceiling = firstEphemeralPort();
const blocks = Math.floor((ceiling - 10000) / BLOCK);
// Worker ids start at 1; the main process (global setup, a run with --runInBand) has none and takes block 0.
const block = Number(process.env['JEST_WORKER_ID'] ?? 0) % blocks;
const start = 10000 + block * BLOCK;
// Start anywhere in the block, so that files one after another in a worker do not all reuse the same ports.
let next = start + Math.floor(Math.random() * BLOCK);

function probe(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  for (let tries = 0; tries < BLOCK; tries++) {
    const port = next;
    next = next + 1 >= start + BLOCK ? start : next + 1;
    if (await probe(port)) return port;
  }
  throw new Error(`no free port in ${start}–${start + BLOCK - 1}`);
}
