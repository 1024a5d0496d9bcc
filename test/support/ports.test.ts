import fs from 'node:fs';
import http from 'node:http';
import { freePort } from './ports.ts';

describe('ports for test servers', () => {
  it('come from outside the ephemeral range and above the Fetch standard\'s bad ports, and fetch reaches them', async () => {
    const [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number) as [number, number];
    const ports: number[] = [];
    for (let i = 0; i < 50; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) {
      expect(port >= low && port <= high).toBe(false);
      expect(port).toBeGreaterThan(10080);
    }
    const server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(ports[0], '127.0.0.1', resolve));
    try {
      expect(await (await fetch(`http://127.0.0.1:${ports[0]}/`)).text()).toBe('ok');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
