/**
 * `npm run bench`: Gatehouse on PostgreSQL, pinned to one core (taskset -c 0), loaded by autocannon
 * from this process on the other core, next to a bare node:http server and an Express hello-world
 * measured in the same run. Prints req/s, p99, peak RSS and the ratio to each ceiling per scenario.
 *
 * Environment: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres; a fresh
 * database is created and dropped), BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 50),
 * BENCH_ONLY (a regular expression: only the scenarios whose names match are measured, for profiling
 * one path), BENCH_PROFILE_DIR (the server runs with `--cpu-prof` and writes its profile there when it
 * stops; Node 24 refuses `--cpu-prof` in NODE_OPTIONS), BENCH_NODE_FLAGS (more flags for the server's
 * node, separated by spaces, such as V8's `--log-deopt --logfile=...`, which NODE_OPTIONS refuses too).
 *
 * The server's external URL is http://localhost:PORT, not an IP address, so that it has passkeys
 * (a WebAuthn relying party id must be a host name): the code flow is measured with a password and
 * with a passkey.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { stringify } from 'yaml';
import { codeFlow, measureFlows, openLoginPage, passwordSignIn } from './code-flow.ts';
import { passkeySignIn, registerPasskeys } from './passkey-flow.ts';
import { nodeOnServerCore, pin, pinned, stopChild, waitFor } from './processes.ts';
import { loadAddOtpOverGrpc } from './rpc-load.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const seconds = Number(process.env['BENCH_SECONDS'] ?? 10);
const connections = Number(process.env['BENCH_CONNECTIONS'] ?? 50);
const baseUrl = process.env['BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const only = process.env['BENCH_ONLY'] ? new RegExp(process.env['BENCH_ONLY'], 'i') : undefined;
/** The JWT profile grant's rows, each printed as a share of client_credentials' JWT rate (at least 80%: docs/performance.md#the-aims). */
const PROFILE_RS256 = 'JWT profile grant (RS256 JWT)';
const PROFILE_ES256 = 'JWT profile, ES256 assertion';
const CLIENT_CREDENTIALS_JWT = 'client_credentials (RS256 JWT)';
const wanted = (name: string) => only === undefined || only.test(name) || name.startsWith('ceiling:');

interface Result {
  name: string;
  rps: number;
  p99: number;
  errors: number;
  non2xx: number;
  rssMiB: number | undefined;
}

function peakRssMiB(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /VmHWM:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A client assertion of a machine user for the JWT profile grant (RFC 7523 §3), signed here: RS256
 * with an RSA key (the kind `gatehouse machine-key create` and the API hand out, in ZITADEL's key
 * file layout) or ES256 with a P-256 key.
 */
function assertion(key: KeyObject, kid: string, userId: string, audience: string): string {
  const now = Math.floor(Date.now() / 1000);
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const rsa = key.asymmetricKeyType === 'rsa';
  const input = `${part({ alg: rsa ? 'RS256' : 'ES256', kid, typ: 'JWT' })}.${part({ iss: userId, sub: userId, aud: audience, iat: now, exp: now + 300, jti: randomUUID() })}`;
  return `${input}.${sign('sha256', Buffer.from(input), rsa ? key : { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

async function userIdOf(databaseUrl: string, userName: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const { rows } = await client.query<{ id: string }>('select id from users where user_name = $1', [userName]);
  await client.end();
  return rows[0]!.id;
}

async function load(name: string, options: autocannon.Options, pid: number | undefined): Promise<Result> {
  if (!wanted(name)) return { name, rps: Number.NaN, p99: Number.NaN, errors: 0, non2xx: 0, rssMiB: undefined };
  // a short warm-up so JIT and pools settle, then the measured run
  await autocannon({ ...options, duration: 2, connections });
  const result = await autocannon({ ...options, duration: seconds, connections });
  return {
    name,
    rps: result.requests.average,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    rssMiB: peakRssMiB(pid),
  };
}

function startChild(script: string, args: string[], env: NodeJS.ProcessEnv, nodeFlags: string[] = []): ChildProcess {
  const command = nodeOnServerCore();
  return spawn(command[0]!, [...command.slice(1), ...nodeFlags, script, ...args], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** Milliseconds per argon2id verification on core 0 (bench/argon2-rate.ts, pinned like the server). */
async function argon2VerifyMs(): Promise<number> {
  const command = nodeOnServerCore();
  const result = spawnSync(command[0]!, [...command.slice(1), path.join(root, 'bench/argon2-rate.ts')], { cwd: root, encoding: 'utf8' });
  return Number(result.stdout.trim());
}

async function main(): Promise<void> {
  pin(process.pid, 1);
  const results: Result[] = [];
  /** A measured scenario's rate; NaN when BENCH_ONLY left it out or it has not run yet. */
  const rateOf = (name: string) => results.find((r) => r.name === name)?.rps ?? Number.NaN;
  let codeFlowLine = '';
  const notes: string[] = [];
  const ceiling = async (kind: string, port: number) => {
    const child = startChild(path.join(root, 'bench/ceilings.ts'), [kind, String(port)], process.env);
    await waitFor(`http://127.0.0.1:${port}/`);
    const result = await load(`ceiling: ${kind === 'node' ? 'bare node:http' : 'express hello-world'}`, { url: `http://127.0.0.1:${port}/` }, child.pid);
    await stopChild(child);
    return result;
  };
  const bare = await ceiling('node', 18081);
  const expressHello = await ceiling('express', 18082);
  results.push(bare, expressHello);

  // A fresh database and a bootstrap file with the benchmark's identities.
  const dbName = `gatehouse_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const dbUrl = new URL(baseUrl);
  dbUrl.pathname = `/${dbName}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-'));
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  // The JWT profile grant's machine keys: RSA as Gatehouse issues them (kid 3), and P-256 (kid 2).
  const profileKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const profileRsaKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const bootstrap = {
    features: { oidcTokenExchange: true },
    orgs: [
      {
        name: 'Bench',
        domain: 'bench.test',
        users: [
          { userName: 'alice', password: 'Correct-Horse-9', email: 'alice@bench.test', emailVerified: false },
          // Signs in with passkeys only: alice keeps none, so her login name still leads to the password step.
          { userName: 'pia', email: 'pia@bench.test', emailVerified: false },
        ],
        machines: [
          { userName: 'jwt-bot', secret: 'jwt-bot-secret', accessTokenType: 'jwt', roles: ['IAM_OWNER'], publicKeys: [{ keyId: '1', pem: publicKey.export({ type: 'spki', format: 'pem' }).toString() }] },
          { userName: 'opaque-bot', secret: 'opaque-bot-secret', accessTokenType: 'opaque' },
          {
            userName: 'profile-bot',
            accessTokenType: 'jwt',
            publicKeys: [
              { keyId: '2', pem: profileKey.publicKey.export({ type: 'spki', format: 'pem' }).toString() },
              { keyId: '3', pem: profileRsaKey.publicKey.export({ type: 'spki', format: 'pem' }).toString() },
            ],
          },
        ],
        projects: [
          {
            name: 'bench',
            apps: [
              { name: 'api', clientId: 'bench-api', clientSecret: 'bench-api-secret', type: 'api', authMethod: 'client_secret_basic' },
              {
                name: 'web',
                clientId: 'bench-web',
                clientSecret: 'bench-web-secret',
                authMethod: 'client_secret_basic',
                redirectUris: ['http://127.0.0.1:18099/callback'],
                responseTypes: ['code'],
                grantTypes: ['authorization_code', 'urn:ietf:params:oauth:grant-type:token-exchange'],
                accessTokenType: 'jwt',
              },
            ],
          },
        ],
      },
    ],
  };
  fs.writeFileSync(path.join(dir, 'bootstrap.yaml'), stringify(bootstrap));
  const port = 18080;
  // Listens on 127.0.0.1, named localhost: a host name is a valid relying party id, an IP address is not.
  const url = `http://localhost:${port}`;
  const profileDir = process.env['BENCH_PROFILE_DIR'];
  const profileFlags = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir)}`] : [];
  const extraFlags = (process.env['BENCH_NODE_FLAGS'] ?? '').split(' ').filter((flag) => flag !== '');
  // The same runtime flags as `npm start` (package.json).
  const server = startChild(path.join(root, 'src/main.ts'), ['start', '--bootstrap', path.join(dir, 'bootstrap.yaml')], {
    NODE_OPTIONS: '--max-semi-space-size=4',
    ...process.env,
    DATABASE_URL: dbUrl.toString(),
    GATEHOUSE_PORT: String(port),
    GATEHOUSE_HOST: '127.0.0.1',
    GATEHOUSE_EXTERNAL_URL: url,
    GATEHOUSE_DATA_DIR: dir,
    GATEHOUSE_MASTER_KEY: Buffer.alloc(32, 9).toString('base64'),
    GATEHOUSE_KEYS_RATE_LIMIT: '0',
    GATEHOUSE_LOG_LEVEL: 'warn',
  }, [...profileFlags, ...extraFlags]);
  try {
    await waitFor(`${url}/healthz`, 60000);
    const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const scope = 'openid urn:gatehouse:iam:org:project:id:gatehouse:aud';
    const projectScope = async () => {
      const row = await new pg.Client({ connectionString: dbUrl.toString() });
      await row.connect();
      const { rows } = await row.query<{ id: string }>(`select id from projects where name = 'bench'`);
      await row.end();
      return `openid urn:gatehouse:iam:org:project:id:${rows[0]!.id}:aud`;
    };
    const ccBody = `grant_type=client_credentials&scope=${encodeURIComponent(scope)}`;
    results.push(
      await load(CLIENT_CREDENTIALS_JWT, { url: `${url}/oauth/v2/token`, method: 'POST', headers: { ...form, authorization: basic('jwt-bot', 'jwt-bot-secret') }, body: ccBody }, server.pid),
      await load('client_credentials (opaque)', { url: `${url}/oauth/v2/token`, method: 'POST', headers: { ...form, authorization: basic('opaque-bot', 'opaque-bot-secret') }, body: ccBody }, server.pid),
    );
    // RFC 7523 §2.1: a fresh assertion per request (each is accepted once, docs/security.md 10.9).
    // With `openid` the grant also signs an ID token, which client_credentials never does; without it
    // the two grants issue the same access token, so those rows compare like with like. The RS256
    // assertions are signed before the load starts, as many as the run can use (an RSA signature
    // here would cost the load generator's core as much as the server's token); ES256 ones are cheap
    // to sign and are made as the requests go out.
    const profileBotId = await userIdOf(dbUrl.toString(), 'profile-bot');
    const presigned: string[] = [];
    let signedDuringLoad = 0;
    const profileGrant = (name: string, profileScope: string, next: () => string) =>
      load(
        name,
        {
          url,
          requests: [
            {
              method: 'POST',
              path: '/oauth/v2/token',
              headers: form,
              setupRequest: (request) => ({
                ...request,
                body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', scope: profileScope, assertion: next() }).toString(),
              }),
            },
          ],
        },
        server.pid,
      );
    const signRs256 = () => assertion(profileRsaKey.privateKey, '3', profileBotId, url);
    const rsaAssertion = () => {
      const ready = presigned.pop();
      if (ready !== undefined) return ready;
      signedDuringLoad += 1;
      return signRs256();
    };
    const es256Assertion = () => assertion(profileKey.privateKey, '2', profileBotId, url);
    if (wanted(PROFILE_RS256)) {
      // the warm-up and the measured run at up to 1.3 times client_credentials' rate
      const clientCredentials = rateOf(CLIENT_CREDENTIALS_JWT);
      const expected = Number.isNaN(clientCredentials) ? 4000 : clientCredentials * 1.3;
      for (let i = Math.ceil(expected * (seconds + 2)); i > 0; i--) presigned.push(signRs256());
    }
    results.push(
      await profileGrant(PROFILE_RS256, scope.replace('openid ', ''), rsaAssertion),
      await profileGrant(PROFILE_ES256, scope.replace('openid ', ''), es256Assertion),
      await profileGrant('JWT profile + ID token (2 JWTs)', scope, es256Assertion),
    );
    presigned.length = 0;
    if (signedDuringLoad > 0) notes.push(`${signedDuringLoad} RS256 assertions were signed during the load (the pre-signed ones ran out)`);
    const introspected = async (user: string, secret: string) => {
      const response = await fetch(`${url}/oauth/v2/token`, {
        method: 'POST',
        headers: { ...form, authorization: basic(user, secret) },
        body: `grant_type=client_credentials&scope=${encodeURIComponent(await projectScope())}`,
      });
      const token = ((await response.json()) as { access_token: string }).access_token;
      return `token=${encodeURIComponent(token)}`;
    };
    const api = { ...form, authorization: basic('bench-api', 'bench-api-secret') };
    results.push(
      await load('introspection (JWT)', { url: `${url}/oauth/v2/introspect`, method: 'POST', headers: api, body: await introspected('jwt-bot', 'jwt-bot-secret') }, server.pid),
      await load('introspection (opaque)', { url: `${url}/oauth/v2/introspect`, method: 'POST', headers: api, body: await introspected('opaque-bot', 'opaque-bot-secret') }, server.pid),
      await load('key set', { url: `${url}/oauth/v2/keys` }, server.pid),
      await load('discovery', { url: `${url}/.well-known/openid-configuration` }, server.pid),
    );
    const flowOptions = { base: url, clientId: 'bench-web', clientSecret: 'bench-web-secret', redirectUri: 'http://127.0.0.1:18099/callback' };
    // The login name page of one pending request, as every browser sign-in renders it first (the
    // application's organization offers no identity provider).
    if (wanted('login name page')) {
      const opened = await openLoginPage(flowOptions);
      results.push(await load('login name page', { url: opened.url, headers: { cookie: opened.browser.cookies() } }, server.pid));
    }
    const alice = passwordSignIn('alice@bench.test', 'Correct-Horse-9');
    const skipped = { flows: 0, perSecond: Number.NaN, p99: Number.NaN, errors: 0 };
    const passwordFlows = wanted('full code flow with a password');
    if (passwordFlows) await measureFlows(flowOptions, () => alice, 4, 2); // warm-up
    const flow = passwordFlows ? await measureFlows(flowOptions, () => alice, 8, seconds) : skipped;
    const flowRss = peakRssMiB(server.pid);
    // The identity API with a user's token (scope openid and the API scope, so `aud` has the API:
    // docs/security.md 10.5).
    const userToken = await codeFlow({ ...flowOptions, scope }, alice);
    const exchangeSubject = await codeFlow({ ...flowOptions, scope: 'openid profile' }, alice);
    const bearer = { authorization: `Bearer ${userToken}`, 'content-type': 'application/json' };
    const aliceId = JSON.parse(Buffer.from(userToken.split('.')[1]!, 'base64url').toString()).sub as string;
    // returnCode is an administrator's (docs/security.md 10.1): the IAM_OWNER machine user asks for
    // alice's code.
    const ownerToken = await fetch(`${url}/oauth/v2/token`, { method: 'POST', headers: { ...form, authorization: basic('jwt-bot', 'jwt-bot-secret') }, body: ccBody })
      .then(async (response) => ((await response.json()) as { access_token: string }).access_token);
    const owner = { authorization: `Bearer ${ownerToken}`, 'content-type': 'application/json' };
    // The same flow with a passkey sign-in: pia's passkeys, one per worker (a credential's counter
    // must go up from one assertion to the next), registered by the IAM_OWNER over REST.
    const pia = await registerPasskeys(url, ownerToken, await userIdOf(dbUrl.toString(), 'pia'), 8);
    const passkeyFlows = wanted('full code flow with a passkey');
    if (passkeyFlows) await measureFlows(flowOptions, (worker) => passkeySignIn(pia[worker]!), 4, 2); // warm-up
    const passkeyFlow = passkeyFlows ? await measureFlows(flowOptions, (worker) => passkeySignIn(pia[worker]!), 8, seconds) : skipped;
    const passkeyRss = peakRssMiB(server.pid);
    results.push(
      await load('AddMyAuthFactorOTP (REST)', { url: `${url}/auth/v1/users/me/auth_factors/otp`, method: 'POST', headers: bearer, body: '{}' }, server.pid),
      await load('ResendContactEmailCode returnCode', { url: `${url}/v3alpha/users/${aliceId}/email/resend`, method: 'POST', headers: owner, body: '{"returnCode":{}}' }, server.pid),
    );
    // Token exchange (RFC 8693): the user's JWT access token for an opaque one with a narrower scope.
    const exchangeBody = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: exchangeSubject,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      scope: 'profile',
    }).toString();
    results.push(
      await load('token exchange (JWT → opaque)', { url: `${url}/oauth/v2/token`, method: 'POST', headers: { ...form, authorization: basic('bench-web', 'bench-web-secret') }, body: exchangeBody }, server.pid),
    );
    if (wanted('AddMyAuthFactorOTP (gRPC h2c)')) {
      await loadAddOtpOverGrpc(url, userToken, connections, 2); // warm-up
      const grpc = await loadAddOtpOverGrpc(url, userToken, connections, seconds);
      results.push({ name: 'AddMyAuthFactorOTP (gRPC h2c)', rps: grpc.perSecond, p99: grpc.p99, errors: grpc.errors, non2xx: 0, rssMiB: peakRssMiB(server.pid) });
    }
    const argon2Ms = passwordFlows ? await argon2VerifyMs() : Number.NaN;
    codeFlowLine =
      `full code flow with a password (authorize → login → password → callback → token), 8 at a time: ${flow.perSecond.toFixed(1)} flows/s, p99 ${flow.p99.toFixed(0)} ms, ${flow.errors} errors, RSS ${flowRss?.toFixed(1) ?? '-'} MiB\n` +
      `full code flow with a passkey (authorize → login → passkey → callback → token), 8 at a time: ${passkeyFlow.perSecond.toFixed(1)} flows/s, p99 ${passkeyFlow.p99.toFixed(0)} ms, ${passkeyFlow.errors} errors, RSS ${passkeyRss?.toFixed(1) ?? '-'} MiB\n` +
      `argon2id: one password verification takes ${argon2Ms.toFixed(1)} ms on the server's core, so the password flows spend ${((flow.perSecond * argon2Ms) / 10).toFixed(0)}% of that core in argon2`;
  } finally {
    await stopChild(server);
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
    fs.rmSync(dir, { recursive: true, force: true });
  }

  const pad = (text: string, width: number) => text.padEnd(width);
  const num = (value: number | undefined, digits = 0) => (value === undefined ? '-' : value.toFixed(digits)).padStart(9);
  process.stdout.write(
    `\nGatehouse benchmark: ${seconds}s per scenario, ${connections} connections, server ${pinned ? 'pinned to core 0, load on core 1' : 'not pinned'}, Node ${process.version}\n\n`,
  );
  process.stdout.write(`${pad('scenario', 34)}${'req/s'.padStart(9)}${'p99 ms'.padStart(9)}${'RSS MiB'.padStart(9)}${'errors'.padStart(9)}${'vs node'.padStart(9)}${'vs expr'.padStart(9)}\n`);
  for (const r of results) {
    if (Number.isNaN(r.rps)) continue; // not in BENCH_ONLY
    process.stdout.write(
      `${pad(r.name, 34)}${num(r.rps)}${num(r.p99, 1)}${num(r.rssMiB, 1)}${num(r.errors + r.non2xx)}${`${((r.rps / bare.rps) * 100).toFixed(0)}%`.padStart(9)}${`${((r.rps / expressHello.rps) * 100).toFixed(0)}%`.padStart(9)}\n`,
    );
  }
  for (const name of [PROFILE_RS256, PROFILE_ES256]) {
    const share = rateOf(name) / rateOf(CLIENT_CREDENTIALS_JWT);
    if (!Number.isNaN(share)) notes.push(`${name}: ${(share * 100).toFixed(1)}% of client_credentials' JWT rate`);
  }
  process.stdout.write(`\n${[...codeFlowLine.split('\n'), ...notes].filter((line) => line !== '' && !line.includes('NaN')).join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
