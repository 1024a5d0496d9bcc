/**
 * Requests to identity providers (src/domain/federation/outbound.ts): only https URLs at public
 * addresses, checked after resolution and again when connecting; no redirects followed; a time and a
 * size limit. The switch GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS lifts the address and scheme rule.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config/index.ts';
import { createLogger } from '../../src/server/request-context.ts';
import { fixture } from '../support/fixtures.ts';
import { startTestServer } from '../support/gatehouse.ts';
import { addressProblem, outboundFetch, outboundUrlProblem, UpstreamUnavailable } from '../../src/domain/federation/outbound.ts';

describe('which addresses a provider may live at', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.0.0.5', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.254', 'private'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.5', 'private'],
    ['::ffff:a00:5', 'private'],
    ['0:0:0:0:0:ffff:c0a8:0101', 'private'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['2002:7f00:1::', 'loopback'],
  ])('refuses %s (%s)', (address, kind) => {
    expect(addressProblem(address)).toBe(kind);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '192.169.0.1', '2001:4860:4860::8888', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808'])(
    'accepts the public address %s',
    (address) => {
      expect(addressProblem(address)).toBeUndefined();
    },
  );
});

describe('checking a provider URL', () => {
  const strict = { allowPrivateNetworks: false };
  const lenient = { allowPrivateNetworks: true };

  it.each([
    ['http://8.8.8.8/', 'must be an https URL'],
    ['ftp://8.8.8.8/', 'must be an https URL'],
    ['not a url', 'must be an absolute URL'],
    ['https://user:secret@8.8.8.8/', 'must not contain a user name or password'],
    ['https://127.0.0.1/', 'resolves to a loopback address (127.0.0.1)'],
    ['https://10.0.0.5/.well-known/openid-configuration', 'resolves to a private address (10.0.0.5)'],
    ['https://[::1]:8443/', 'resolves to a loopback address (::1)'],
    ['https://[::ffff:192.168.0.1]/', 'resolves to a private address (::ffff:c0a8:1)'],
    ['https://169.254.169.254/latest/meta-data/', 'resolves to a link-local address (169.254.169.254)'],
    ['https://host.invalid/', 'host not found (host.invalid)'],
  ])('refuses %s: %s', async (url, reason) => {
    expect(await outboundUrlProblem(url, strict)).toBe(reason);
  });

  it('accepts an https URL at a public address', async () => {
    expect(await outboundUrlProblem('https://8.8.8.8/', strict)).toBeUndefined();
  });

  it('refuses a host name that resolves to 127.0.0.1 without the switch, and accepts it with it', async () => {
    expect(await outboundUrlProblem('https://localhost/', strict)).toMatch(/^resolves to a loopback address \((127\.0\.0\.1|::1)\)$/);
    expect(await outboundUrlProblem('http://localhost:8080/', lenient)).toBeUndefined();
    expect(await outboundUrlProblem('http://10.0.0.5/', lenient)).toBeUndefined();
    expect(await outboundUrlProblem('ftp://10.0.0.5/', lenient)).toBe('must be an https URL');
  });
});

describe('fetching from a provider', () => {
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    server = http.createServer((request, response) => {
      if (request.url === '/json') {
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ method: request.method, type: request.headers['content-type'] ?? null }));
      } else if (request.url === '/echo') {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => response.end(body));
      } else if (request.url === '/redirect') {
        response.writeHead(302, { location: 'http://169.254.169.254/' }).end();
      } else if (request.url === '/slow') {
        setTimeout(() => response.end('late'), 2000).unref();
      } else if (request.url === '/huge') {
        // No content-length: the limit must be enforced while reading, not only from the header.
        const chunk = Buffer.alloc(64 * 1024, 'a');
        let sent = 0;
        const write = () => {
          while (sent < 40) {
            sent += 1;
            if (!response.write(chunk)) return void response.once('drain', write);
          }
          response.end();
        };
        write();
      } else if (request.url === '/declared') {
        response.writeHead(200, { 'content-length': String(2 * 1024 * 1024) });
        response.write('a');
      } else response.writeHead(404).end('no');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const allowed = { allowPrivateNetworks: true };

  it('answers a web Response with status, headers and body', async () => {
    const response = await outboundFetch(`${base}/json`, { method: 'POST', body: new URLSearchParams({ a: '1' }) }, allowed);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ method: 'POST', type: 'application/x-www-form-urlencoded;charset=UTF-8' });
    const echo = await outboundFetch(`${base}/echo`, { method: 'POST', body: 'grant_type=x' }, allowed);
    expect(await echo.text()).toBe('grant_type=x');
    expect((await outboundFetch(`${base}/nothing`, {}, allowed)).status).toBe(404);
  });

  it('refuses a loopback provider without the switch, before connecting', async () => {
    const attempt = outboundFetch(`${base}/json`, {}, { allowPrivateNetworks: false });
    await expect(attempt).rejects.toThrow(UpstreamUnavailable);
    await expect(outboundFetch(`${base}/json`, {}, { allowPrivateNetworks: false })).rejects.toThrow('must be an https URL');
    const port = new URL(base).port;
    await expect(outboundFetch(`https://localhost:${port}/json`, {}, { allowPrivateNetworks: false })).rejects.toThrow(/^resolves to a loopback address/);
  });

  it('does not follow a redirect', async () => {
    const response = await outboundFetch(`${base}/redirect`, {}, allowed);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('http://169.254.169.254/');
  });

  it('gives up on a provider that answers too slowly', async () => {
    await expect(outboundFetch(`${base}/slow`, {}, { ...allowed, timeoutMs: 200 })).rejects.toThrow(/did not answer within 0.2 s/);
  });

  it('gives up on an answer larger than the limit, declared or not', async () => {
    await expect(outboundFetch(`${base}/huge`, {}, allowed)).rejects.toThrow(/answered with more than 1048576 bytes/);
    await expect(outboundFetch(`${base}/declared`, {}, allowed)).rejects.toThrow(/answered with more than 1048576 bytes/);
    const small = await outboundFetch(`${base}/huge`, {}, { ...allowed, maxResponseBytes: 4 * 1024 * 1024 });
    expect((await small.arrayBuffer()).byteLength).toBe(40 * 64 * 1024);
  });

  it('names an unreachable provider', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(outboundFetch(`http://127.0.0.1:${port}/`, {}, allowed)).rejects.toThrow(`127.0.0.1:${port} could not be reached (ECONNREFUSED)`);
  });
});

describe('the switch GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS', () => {
  const base = { GATEHOUSE_EXTERNAL_URL: 'https://login.example.test' };

  it('is off unless set, and takes only true or false', () => {
    expect(loadConfig(base, false).idpAllowPrivateNetworks).toBe(false);
    expect(loadConfig({ ...base, GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS: 'true' }, false).idpAllowPrivateNetworks).toBe(true);
    expect(loadConfig({ ...base, GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS: 'false' }, false).idpAllowPrivateNetworks).toBe(false);
    expect(() => loadConfig({ ...base, GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS: 'yes' }, false)).toThrow('GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS must be true or false, got "yes"');
  });

  it('is named in the start-up log when it is on', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const server = await startTestServer(fixture().document, { GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS: 'true' }, { log: createLogger('info', sink) });
    try {
      expect(lines.filter((line) => line['idpAllowPrivateNetworks'] === true)).toEqual([
        expect.objectContaining({ level: 40, msg: expect.stringMatching(/^GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS is on: identity providers may be reached over http and at private addresses/) }),
      ]);
    } finally {
      await server.stop();
    }
  });
});
