/**
 * A TCP proxy between a test server and PostgreSQL (TEST_DATABASE_URL): `cut()` closes it and every
 * link through it, so the server sees its database go away; `restore()` opens it again on the same
 * port, and the server finds its database back by itself.
 */
import net from 'node:net';
import { freePort } from './ports.ts';

export interface DatabaseProxy {
  /** A connection string to `databaseUrl`'s database through the proxy. */
  via(databaseUrl: string): string;
  cut(): Promise<void>;
  restore(): Promise<void>;
}

export async function openDatabaseProxy(): Promise<DatabaseProxy> {
  const target = new URL(process.env['TEST_DATABASE_URL']!);
  const port = await freePort();
  const links = new Set<net.Socket>();
  let proxy: net.Server | undefined;

  const open = (): Promise<void> => {
    proxy = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      links.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      const drop = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
    });
    return new Promise((resolve) => proxy!.listen(port, '127.0.0.1', () => resolve()));
  };
  await open();

  return {
    via(databaseUrl) {
      const url = new URL(databaseUrl);
      url.host = `127.0.0.1:${port}`;
      return url.toString();
    },
    cut() {
      if (!proxy?.listening) return Promise.resolve(); // already cut
      for (const socket of links) socket.destroy();
      links.clear();
      return new Promise((resolve) => proxy!.close(() => resolve()));
    },
    restore: open,
  };
}
