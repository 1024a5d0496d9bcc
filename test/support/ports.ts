/**
 * A free TCP port on the loopback interface, for a server that must know its URL before it listens.
 *
 * Not a port the kernel picks (`listen(0)`): those come from the ephemeral range, which every
 * outgoing connection draws its local port from too, so between our probe and the server's listen
 * a connection to PostgreSQL could take the port (seen as EADDRINUSE in a full run). Ports are drawn
 * outside the ephemeral range instead (below it, or above it where it starts low), each jest worker
 * from its own block, one after another, and each is probed by listening on it before it is handed out.
 */
import fs from 'node:fs';
import net from 'node:net';

const BLOCK = 1000;

/** The ports outside the kernel's ephemeral range that the blocks are cut from. */
function usablePorts(): { from: number; to: number } {
  let low = 32768;
  let high = 60999;
  try {
    [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number) as [number, number];
  } catch {
    // not Linux: the IANA dynamic range is 49152–65535, so the default below stays clear of it
  }
  // From 11000: browsers and fetch refuse the "bad ports" of the Fetch standard, the highest of which is 10080.
  if (low - 11000 >= 2 * BLOCK) return { from: 11000, to: low };
  if (65536 - (high + 1) >= 2 * BLOCK) return { from: high + 1, to: 65536 };
  throw new Error(`the ephemeral port range ${low}–${high} leaves no room for test servers' ports`);
}

const { from, to } = usablePorts();
const blocks = Math.floor((to - from) / BLOCK);
// JEST_WORKER_ID counts from 1 (--runInBand too); more workers than blocks would share blocks.
const worker = Math.max(1, Number(process.env['JEST_WORKER_ID']) || 1) - 1;
const start = from + (worker % blocks) * BLOCK;
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
