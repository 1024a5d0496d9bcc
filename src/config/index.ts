/**
 * Gatehouse configuration: one typed object, read from the environment once and validated.
 * Every key documents what it is, its default and why. Each part of the code receives only the
 * slice it needs (see the `*Config` types below).
 */
import path from 'node:path';
import { parseTrustedProxies, type TrustedProxies } from './ip-addresses.ts';

export type SigningAlg = 'RS256' | 'ES256' | 'EdDSA';
export type LogFormat = 'pretty' | 'json';

export interface Config {
  /** GATEHOUSE_PORT: the one listen port for every protocol. Default 8080. */
  port: number;
  /** GATEHOUSE_HOST: listen address. Default 0.0.0.0. */
  host: string;
  /** GATEHOUSE_EXTERNAL_URL: {base_url} and the issuer. Default http://localhost:{port}. No trailing slash. */
  externalUrl: string;
  /** DATABASE_URL: PostgreSQL connection string; unset selects the embedded PGlite database. */
  databaseUrl: string | undefined;
  /** GATEHOUSE_DATA_DIR: folder of the embedded database and a generated master key. Default ./.gatehouse */
  dataDir: string;
  /** GATEHOUSE_MASTER_KEY: 32 bytes, base64; encrypts signing keys and OTP secrets at rest. */
  masterKey: string | undefined;
  /** GATEHOUSE_SERVICE_NAME: `<service>` in the reserved scopes and token types. Default gatehouse. */
  serviceName: string;
  /** GATEHOUSE_BOOTSTRAP: bootstrap file applied at start. */
  bootstrapFile: string | undefined;
  /**
   * GATEHOUSE_FIRST_PAT_PATH: where the first start writes the personal access token of its `admin-api`
   * machine user (mode 600). Default `<data dir>/admin.pat`: the operator's first API credential sits
   * beside the data it opens, readable by the account that runs the server only.
   */
  firstPatPath: string;
  /** GATEHOUSE_SMTP_URL / GATEHOUSE_SMTP_FROM: mail delivery; unset logs the message and keeps it in the outbox. */
  smtpUrl: string | undefined;
  smtpFrom: string;
  /** GATEHOUSE_TLS_CERT / GATEHOUSE_TLS_KEY: PEM file paths; both set serves TLS with ALPN h2 + http/1.1. */
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  /** GATEHOUSE_SIGNING_ALG: algorithm of new signing keys. Default RS256 (what every OIDC client supports). */
  signingAlg: SigningAlg;
  /** GATEHOUSE_LOG_LEVEL: pino level. Default info. */
  logLevel: string;
  /**
   * GATEHOUSE_LOG_FORMAT: `json` (one JSON object a line, for log shippers) or `pretty` (pino-pretty's
   * readable lines). Default `pretty` when standard output is a terminal (a person reads it), else
   * `json` (a process manager or container runtime collects it).
   */
  logFormat: LogFormat;
  /** GATEHOUSE_KEYS_RATE_LIMIT: key-set requests per minute per client address; 0 turns it off. Default 600. */
  keysRateLimit: number;
  /** GATEHOUSE_ISSUER_NAME: issuer shown in authenticator apps. Default: the host of the external URL. */
  issuerName: string;
  lifetimes: Lifetimes;
  /** GATEHOUSE_KEY_ROTATION_HOURS: a signing key signs this long before the next one takes over. Default 168 (7 days). */
  keyRotationSeconds: number;
  /** GATEHOUSE_MAX_BODY_BYTES: largest accepted request body. Default 64 KiB: nothing we accept is larger. */
  maxBodyBytes: number;
  /** GATEHOUSE_CHANGE_POLL_MS: how often a server looks for changes made by other processes. Default 1000. */
  changePollMs: number;
  /**
   * GATEHOUSE_STATEMENT_TIMEOUT_MS: PostgreSQL cancels a statement that runs longer (its
   * `statement_timeout`), so a slow statement stops in the database instead of running on after the
   * request gave up, and its connection is free for the next one. Default 10000.
   */
  statementTimeoutMs: number;
  /**
   * GATEHOUSE_FAILED_AUTH_RATE_LIMIT: failed sign-ins and failed client authentications per minute
   * per client address, after which the address gets 429 before any hash is computed
   * (docs/security.md 10.11). Default 20; 0 turns it off.
   */
  failedAuthRateLimit: number;
  /**
   * GATEHOUSE_REGISTRATIONS_PER_HOUR: self-registrations the instance accepts in any hour, from all
   * addresses together; past it the register page answers 429 with Retry-After. A budget against
   * floods from many addresses (an IPv6 prefix holds millions of /64s), each of which is limited to 5
   * an hour anyway; ordinary sign-ups stay far below it. Default 1000; 0 turns this budget off, as 0
   * does for the other limits (the per-address limit stays; switching registration off is the
   * organizations' `allowRegister`).
   */
  registrationsPerHour: number;
  /**
   * GATEHOUSE_TRUSTED_PROXIES: IP addresses of reverse proxies trusted to name the client in
   * X-Forwarded-For, for the per-address limits. Default none: the socket address counts.
   */
  trustedProxies: TrustedProxies;
  /** GATEHOUSE_METRICS_TOKEN: when set, /metrics answers only `Authorization: Bearer <token>` (docs/security.md 10.14). */
  metricsToken: string | undefined;
  /**
   * GATEHOUSE_GRPC_REFLECTION: serve gRPC server reflection (grpc.reflection.v1 and v1alpha), without
   * authentication, so that grpcurl, buf curl and grpcui work without the .proto files. Default true;
   * `false` hides the API's shape from anonymous callers (it is ZITADEL's public API either way).
   */
  grpcReflection: boolean;
  /**
   * GATEHOUSE_WEBAUTHN_RP_ID: the passkeys' relying party id (docs/passkeys.md#the-relying-party).
   * Default: the host name of the external URL. It must be that host name or a domain it belongs to
   * (`example.com` for `login.example.com`), so passkeys registered for the wider domain keep
   * working when the login moves to another subdomain. Unset with an IP-address host: passkeys are
   * disabled.
   */
  webauthnRpId: string | undefined;
  /**
   * GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS: let requests to external identity providers go to http URLs
   * and to loopback, private and link-local addresses. Default false, because whoever configures a
   * provider (an organization's owner) would otherwise reach into the operator's network through
   * Gatehouse (server-side request forgery; docs/federation.md#how-gatehouse-talks-to-a-provider).
   * For development and tests with a provider on the same machine.
   */
  idpAllowPrivateNetworks: boolean;
}

/** Lifetimes in seconds (docs/configuration.md#tokens-and-keys), each configurable as GATEHOUSE_<NAME>_SECONDS. */
export interface Lifetimes {
  authCode: number;
  accessToken: number;
  idToken: number;
  refreshIdle: number;
  refreshAbsolute: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min) throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return Number(raw);
}

function text(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw === '' ? undefined : raw;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

// A DNS name: dot-separated labels of letters, digits and inner dashes.
const DOMAIN_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** GATEHOUSE_WEBAUTHN_RP_ID: a domain name the external URL's host is, or belongs to (WebAuthn §5.1.3). */
function webauthnRpId(env: Env, externalHost: string): string | undefined {
  const raw = text(env, 'GATEHOUSE_WEBAUTHN_RP_ID');
  if (raw === undefined) return undefined;
  const rpId = raw.toLowerCase();
  if (!DOMAIN_NAME.test(rpId) || /^[\d.]+$/.test(rpId)) {
    throw new ConfigError(`GATEHOUSE_WEBAUTHN_RP_ID must be a domain name (no scheme, port or IP address), got "${raw}"`);
  }
  if (externalHost !== rpId && !externalHost.endsWith(`.${rpId}`)) {
    throw new ConfigError(`GATEHOUSE_WEBAUTHN_RP_ID must be the host of GATEHOUSE_EXTERNAL_URL (${externalHost}) or a domain it belongs to, got "${raw}"`);
  }
  return rpId;
}

function proxies(env: Env): TrustedProxies {
  try {
    return parseTrustedProxies(text(env, 'GATEHOUSE_TRUSTED_PROXIES'));
  } catch (error) {
    throw new ConfigError(`GATEHOUSE_TRUSTED_PROXIES: ${(error as Error).message}`);
  }
}

/** `DATABASE_URL` as it may be shown: the password masked. */
export function displayedDatabaseUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password !== '') url.password = '***';
    return url.toString();
  } catch {
    return raw.replace(/:[^:@/]*@/, ':***@');
  }
}

/** GATEHOUSE_LOG_FORMAT: pretty or json; unset follows whether standard output is a terminal. */
function logFormat(env: Env, terminal: boolean): LogFormat {
  const raw = text(env, 'GATEHOUSE_LOG_FORMAT');
  if (raw === undefined) return terminal ? 'pretty' : 'json';
  if (raw !== 'pretty' && raw !== 'json') throw new ConfigError(`GATEHOUSE_LOG_FORMAT must be pretty or json, got "${raw}"`);
  return raw;
}

/** DATABASE_URL: a postgres:// or postgresql:// URL, or none (the embedded database). */
function databaseUrl(env: Env): string | undefined {
  const raw = text(env, 'DATABASE_URL');
  if (raw === undefined) return undefined;
  const shown = displayedDatabaseUrl(raw);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`DATABASE_URL ${shown}: not a URL (expected postgres://USER:PASSWORD@HOST:5432/DATABASE, or no DATABASE_URL for the embedded database)`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError(`DATABASE_URL ${shown}: unsupported scheme "${url.protocol.slice(0, -1)}" (Gatehouse stores its data in PostgreSQL: postgres://USER:PASSWORD@HOST:5432/DATABASE)`);
  }
  if (url.hostname === '' && !url.searchParams.has('host')) throw new ConfigError(`DATABASE_URL ${shown}: names no host`);
  return raw;
}

/** Every variable Gatehouse reads; any other `GATEHOUSE_` variable is most likely a typo. */
export const KNOWN_VARIABLES = [
  'DATABASE_URL', 'GATEHOUSE_PORT', 'GATEHOUSE_HOST', 'GATEHOUSE_EXTERNAL_URL', 'GATEHOUSE_DATA_DIR', 'GATEHOUSE_MASTER_KEY',
  'GATEHOUSE_SERVICE_NAME', 'GATEHOUSE_BOOTSTRAP', 'GATEHOUSE_FIRST_PAT_PATH', 'GATEHOUSE_SMTP_URL', 'GATEHOUSE_SMTP_FROM', 'GATEHOUSE_TLS_CERT', 'GATEHOUSE_TLS_KEY',
  'GATEHOUSE_SIGNING_ALG', 'GATEHOUSE_LOG_LEVEL', 'GATEHOUSE_LOG_FORMAT', 'GATEHOUSE_KEYS_RATE_LIMIT', 'GATEHOUSE_ISSUER_NAME', 'GATEHOUSE_AUTH_CODE_SECONDS',
  'GATEHOUSE_ACCESS_TOKEN_SECONDS', 'GATEHOUSE_ID_TOKEN_SECONDS', 'GATEHOUSE_REFRESH_IDLE_SECONDS', 'GATEHOUSE_REFRESH_ABSOLUTE_SECONDS',
  'GATEHOUSE_KEY_ROTATION_HOURS', 'GATEHOUSE_MAX_BODY_BYTES', 'GATEHOUSE_CHANGE_POLL_MS', 'GATEHOUSE_STATEMENT_TIMEOUT_MS',
  'GATEHOUSE_FAILED_AUTH_RATE_LIMIT', 'GATEHOUSE_REGISTRATIONS_PER_HOUR', 'GATEHOUSE_METRICS_TOKEN', 'GATEHOUSE_TRUSTED_PROXIES',
  'GATEHOUSE_GRPC_REFLECTION', 'GATEHOUSE_WEBAUTHN_RP_ID', 'GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS',
  // read by the test suite, not the server (docs/testing.md)
  'GATEHOUSE_TEST_VM_MODULES', 'GATEHOUSE_SCREENSHOTS',
] as const;

/** Edit distance (insertions, deletions, substitutions, and swaps of neighbours). */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The `GATEHOUSE_` variables of `env` that Gatehouse does not read, each with the known name closest
 * to it when one is close (a typo such as GATEHOUSE_PROT), to be reported at start.
 */
export function unknownVariables(env: Env): Array<{ name: string; closest: string | undefined }> {
  const known: readonly string[] = KNOWN_VARIABLES;
  return Object.keys(env)
    .filter((name) => name.startsWith('GATEHOUSE_') && !known.includes(name))
    .sort()
    .map((name) => {
      let closest: string | undefined;
      let best = Math.max(2, Math.floor(name.length / 4)) + 1;
      for (const candidate of known) {
        const d = distance(name, candidate);
        if (d < best) [closest, best] = [candidate, d];
      }
      return { name, closest };
    });
}

/** `terminal`: whether standard output is a terminal (the default log format follows it). */
export function loadConfig(env: Env = process.env, terminal = process.stdout.isTTY === true): Config {
  const port = integer(env, 'GATEHOUSE_PORT', 8080);
  if (port > 65535) throw new ConfigError(`GATEHOUSE_PORT must be a port number, got ${port}`);
  const externalUrl = (text(env, 'GATEHOUSE_EXTERNAL_URL') ?? `http://localhost:${port}`).replace(/\/+$/, '');
  let parsed: URL;
  try {
    parsed = new URL(externalUrl);
  } catch {
    throw new ConfigError(`GATEHOUSE_EXTERNAL_URL must be an absolute URL, got "${externalUrl}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError('GATEHOUSE_EXTERNAL_URL must use http or https');
  }
  if (parsed.search || parsed.hash) throw new ConfigError('GATEHOUSE_EXTERNAL_URL must not carry a query or fragment');
  const signingAlg = text(env, 'GATEHOUSE_SIGNING_ALG') ?? 'RS256';
  if (signingAlg !== 'RS256' && signingAlg !== 'ES256' && signingAlg !== 'EdDSA') {
    throw new ConfigError(`GATEHOUSE_SIGNING_ALG must be RS256, ES256 or EdDSA, got "${signingAlg}"`);
  }
  const serviceName = text(env, 'GATEHOUSE_SERVICE_NAME') ?? DEFAULT_SERVICE_NAME;
  if (!/^[a-z0-9][a-z0-9-]*$/i.test(serviceName)) throw new ConfigError('GATEHOUSE_SERVICE_NAME must be letters, digits and dashes');
  const tlsCert = text(env, 'GATEHOUSE_TLS_CERT');
  const tlsKey = text(env, 'GATEHOUSE_TLS_KEY');
  if ((tlsCert === undefined) !== (tlsKey === undefined)) {
    throw new ConfigError('GATEHOUSE_TLS_CERT and GATEHOUSE_TLS_KEY must be set together');
  }
  const dataDir = path.resolve(text(env, 'GATEHOUSE_DATA_DIR') ?? '.gatehouse');
  return {
    port,
    host: text(env, 'GATEHOUSE_HOST') ?? '0.0.0.0',
    externalUrl,
    databaseUrl: databaseUrl(env),
    dataDir,
    masterKey: text(env, 'GATEHOUSE_MASTER_KEY'),
    serviceName,
    bootstrapFile: text(env, 'GATEHOUSE_BOOTSTRAP'),
    firstPatPath: path.resolve(text(env, 'GATEHOUSE_FIRST_PAT_PATH') ?? path.join(dataDir, 'admin.pat')),
    smtpUrl: text(env, 'GATEHOUSE_SMTP_URL'),
    smtpFrom: text(env, 'GATEHOUSE_SMTP_FROM') ?? `gatehouse@${parsed.hostname}`,
    tlsCert,
    tlsKey,
    signingAlg,
    logLevel: text(env, 'GATEHOUSE_LOG_LEVEL') ?? 'info',
    logFormat: logFormat(env, terminal),
    keysRateLimit: integer(env, 'GATEHOUSE_KEYS_RATE_LIMIT', 600),
    issuerName: text(env, 'GATEHOUSE_ISSUER_NAME') ?? parsed.host,
    lifetimes: {
      authCode: integer(env, 'GATEHOUSE_AUTH_CODE_SECONDS', 600, 1),
      accessToken: integer(env, 'GATEHOUSE_ACCESS_TOKEN_SECONDS', 12 * 3600, 1),
      idToken: integer(env, 'GATEHOUSE_ID_TOKEN_SECONDS', 12 * 3600, 1),
      refreshIdle: integer(env, 'GATEHOUSE_REFRESH_IDLE_SECONDS', 30 * 86400, 1),
      refreshAbsolute: integer(env, 'GATEHOUSE_REFRESH_ABSOLUTE_SECONDS', 90 * 86400, 1),
    },
    keyRotationSeconds: integer(env, 'GATEHOUSE_KEY_ROTATION_HOURS', 168, 1) * 3600,
    maxBodyBytes: integer(env, 'GATEHOUSE_MAX_BODY_BYTES', 64 * 1024, 1024),
    changePollMs: integer(env, 'GATEHOUSE_CHANGE_POLL_MS', 1000, 50),
    statementTimeoutMs: integer(env, 'GATEHOUSE_STATEMENT_TIMEOUT_MS', 10_000, 100),
    failedAuthRateLimit: integer(env, 'GATEHOUSE_FAILED_AUTH_RATE_LIMIT', 20),
    registrationsPerHour: integer(env, 'GATEHOUSE_REGISTRATIONS_PER_HOUR', 1000),
    metricsToken: text(env, 'GATEHOUSE_METRICS_TOKEN'),
    trustedProxies: proxies(env),
    grpcReflection: boolean(env, 'GATEHOUSE_GRPC_REFLECTION', true),
    webauthnRpId: webauthnRpId(env, parsed.hostname),
    idpAllowPrivateNetworks: boolean(env, 'GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS', false),
  };
}

/**
 * Whether clients reach Gatehouse over https: TLS served here, or an https external URL behind a
 * proxy that terminates TLS. Then cookies are Secure and `__Host-` prefixed, and every response
 * carries HSTS (docs/security.md 10.7, 10.14).
 */
export function servesHttps(config: Pick<Config, 'externalUrl' | 'tlsCert'>): boolean {
  return config.tlsCert !== undefined || config.externalUrl.startsWith('https:');
}

/** `<service>` of the reserved scopes and token types unless GATEHOUSE_SERVICE_NAME says otherwise. */
export const DEFAULT_SERVICE_NAME = 'gatehouse';

/** The reserved scope that adds the Gatehouse API audience (docs/security.md 10.5). */
export function apiAudienceScope(serviceName: string): string {
  return `urn:${serviceName}:iam:org:project:id:${serviceName}:aud`;
}
