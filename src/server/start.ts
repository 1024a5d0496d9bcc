/**
 * Builds a running Gatehouse: database, migrations, master key, instance, keys, caches, the change
 * watcher and the listener. Used by `gatehouse start`, the tests and the benchmark.
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type http2 from 'node:http2';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { createApiHandler } from '../api/handler.ts';
import { registerServices } from '../api/services.ts';
import { servesHttps, type Config } from '../config/index.ts';
import type { Gatehouse } from '../context.ts';
import { bearerAuthenticator } from '../domain/authenticate.ts';
import { MasterKey } from '../domain/crypto.ts';
import { Directory } from '../domain/directory.ts';
import { FailureThrottle } from '../domain/failure-throttle.ts';
import { changeMark } from '../domain/events.ts';
import { KeyStore } from '../domain/keys.ts';
import { Tokens } from '../domain/tokens.ts';
import { createSmtpTransport } from '../mail/smtp.ts';
import { startMailWorker, type MailWorker } from '../mail/worker.ts';
import { discoveryDocument } from '../oauth/discovery.ts';
import { apiAudience } from '../oauth/scopes.ts';
import { migrate, openDatabase, type DB } from '../store/database.ts';
import { createApp } from './app.ts';
import { listen, type Listener } from './listen.ts';
import { createCors } from './cors.ts';
import { createMetrics } from './metrics.ts';
import { createLogger, requestIdFor, withRequestId } from './request-context.ts';
import { routeLabel } from './routes.ts';

export interface Running {
  gh: Gatehouse;
  listener: Listener;
  url: string;
  /** The outbox delivery worker (SPEC §8); `kick()` after queueing mail sends it without waiting for the next poll. */
  mail: MailWorker;
  /** SIGTERM behaviour: stop accepting, finish in-flight requests (up to 10 s), stop workers, close the database. */
  stop(): Promise<void>;
}

/** The master key: from the environment, else generated once into the data dir (with a warning). */
export function loadMasterKey(config: Pick<Config, 'masterKey' | 'dataDir'>, log: Logger): MasterKey {
  if (config.masterKey) return new MasterKey(config.masterKey);
  const file = path.join(config.dataDir, 'master.key');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(config.dataDir, { recursive: true });
    fs.writeFileSync(file, randomUUIDKey(), { mode: 0o600, flag: 'wx' });
    log.warn({ file }, 'GATEHOUSE_MASTER_KEY is not set: generated a master key into the data dir; set the variable in production');
  }
  return new MasterKey(fs.readFileSync(file, 'utf8').trim());
}

function randomUUIDKey(): string {
  return Buffer.concat([Buffer.from(randomUUID().replaceAll('-', ''), 'hex'), Buffer.from(randomUUID().replaceAll('-', ''), 'hex')]).toString('base64');
}

export async function instanceIdOf(db: DB): Promise<string | undefined> {
  const row = await db.selectFrom('instances').select('id').orderBy('created_at').executeTakeFirst();
  return row?.id;
}

export interface StartOptions {
  config: Config;
  log?: Logger;
  /** Runs after migrations, before serving: first-run defaults or a bootstrap file. */
  prepare?: (db: DB) => Promise<void>;
}

export async function startServer({ config, log = createLogger(config.logLevel), prepare }: StartOptions): Promise<Running> {
  const { db, relaxed } = await openDatabase(config);
  await migrate(db);
  await prepare?.(db);
  const instanceId = await instanceIdOf(db);
  if (!instanceId) throw new Error('the database has no instance: run `gatehouse bootstrap FILE` or start without a bootstrap file');

  const masterKey = loadMasterKey(config, log);
  const keys = new KeyStore(db, masterKey, {
    signingAlg: config.signingAlg,
    keyRotationSeconds: config.keyRotationSeconds,
    maxTokenSeconds: Math.max(config.lifetimes.accessToken, config.lifetimes.idToken),
  });
  await keys.refresh();
  const directory = new Directory(db);
  const metrics = createMetrics();
  const tokens = new Tokens(db, relaxed, keys, {
    issuer: config.externalUrl,
    accessTokenSeconds: config.lifetimes.accessToken,
    idTokenSeconds: config.lifetimes.idToken,
  });
  const throttle = new FailureThrottle(config.failedAuthRateLimit);
  const gh: Gatehouse = { config, db, log, masterKey, keys, directory, tokens, metrics, throttle, instanceId };

  let discoveryJson = JSON.stringify(await discoveryDocument(gh));
  const cors = createCors(db, instanceId, config.externalUrl);
  /** Empties the caches after a change (ours or, through the change watcher, another process's). */
  const refresh = async (): Promise<void> => {
    directory.clear();
    cors.clear();
    await keys.refresh();
    discoveryJson = JSON.stringify(await discoveryDocument(gh));
  };
  const app = createApp(gh, { discoveryJson: () => discoveryJson });
  const api = createApiHandler({
    db,
    instanceId: () => instanceId,
    serviceName: config.serviceName,
    apiAudience: apiAudience(gh), // SPEC 10.5
    maxBodyBytes: config.maxBodyBytes,
    grpcReflection: config.grpcReflection,
    authenticate: bearerAuthenticator(tokens, directory, instanceId),
    changed: () => {
      directory.clear(); // at once: the next token request reads the new flags
      refresh().catch((error: unknown) => log.warn({ err: error }, 'cache refresh failed'));
    },
    log,
  }, (router) => registerServices(router, gh));

  const accessLog = log.isLevelEnabled('debug');
  const hsts = servesHttps(config); // SPEC 10.14: under https every response carries HSTS
  /** Metrics and the access log (debug level) for one request; returns its request id. */
  const observe = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse): string => {
    const started = process.hrtime.bigint();
    const id = requestIdFor(req.headers['x-request-id']);
    res.setHeader('x-request-id', id);
    if (hsts) res.setHeader('strict-transport-security', 'max-age=31536000'); // SPEC 10.14
    res.once('finish', () => {
      const route = routeLabel(req.url ?? '/');
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.requests.inc({ route, method: req.method ?? 'GET', status: String(res.statusCode) });
      metrics.latency.observe({ route }, seconds);
      if (accessLog) log.debug({ requestId: id, method: req.method, route, status: res.statusCode, ms: Math.round(seconds * 1e4) / 10 }, 'request');
    });
    return id;
  };
  const failed = (res: http.ServerResponse | http2.Http2ServerResponse) => (error: unknown) => {
    log.error({ err: error }, 'api handler failed');
    if (res.headersSent) return;
    res.statusCode = 500;
    res.setHeader('content-type', 'application/json');
    res.end('{"code":13,"message":"internal error"}');
  };

  // A malformed GATEHOUSE_SMTP_URL fails the start here, before anything listens.
  const smtpTransport = config.smtpUrl ? createSmtpTransport(config.smtpUrl) : undefined;
  const listener = await listen({
    host: config.host,
    port: config.port,
    tls: config.tlsCert && config.tlsKey ? { cert: config.tlsCert, key: config.tlsKey } : undefined,
    http1: (req, res) => {
      withRequestId(observe(req, res), () => {
        const serve = () => api.handle(req, res).then((handled) => void (handled || app(req, res)));
        // Same-origin and non-browser requests (no Origin header) skip CORS altogether.
        const served = req.headers.origin === undefined ? serve() : cors.handle(req, res).then((answered) => (answered ? undefined : serve()));
        served.catch(failed(res));
      });
    },
    http2: (req, res) => {
      withRequestId(observe(req, res), () => {
        api.handle(req, res).then((handled) => {
          if (!handled && !res.headersSent) {
            res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found","error_description":"HTTP/2 serves the API only"}');
          }
        }, failed(res));
      });
    },
  });

  // The change watcher: a change anywhere on this database (the change mark moves) clears the caches.
  let seen = await changeMark(db);
  let polling = false;
  const poll = setInterval(() => {
    if (polling) return;
    polling = true;
    (async () => {
      const latest = await changeMark(db);
      if (latest !== seen) {
        seen = latest;
        await refresh();
      }
    })()
      .catch((error: unknown) => log.warn({ err: error }, 'change poll failed'))
      .finally(() => (polling = false));
  }, config.changePollMs);
  poll.unref();
  // Rotation and clean-up run on their own clock; they are cheap no-ops most of the time.
  const housekeeping = setInterval(() => {
    (async () => {
      await keys.refresh();
      await keys.prune();
      const now = new Date();
      await db.deleteFrom('used_assertions').where('expires_at', '<', now).execute();
      await db.deleteFrom('revocations').where('expires_at', '<', now).execute();
      await db.deleteFrom('tokens').where('expires_at', '<', new Date(now.getTime() - 86400_000)).execute();
    })().catch((error: unknown) => log.warn({ err: error }, 'housekeeping failed'));
  }, 60_000);
  housekeeping.unref();

  const url = `${config.tlsCert ? 'https' : 'http'}://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${listener.port}`;
  log.info({ port: listener.port, issuer: config.externalUrl }, 'gatehouse is listening');
  const mail = startMailWorker(gh, { transport: smtpTransport });

  return {
    gh,
    listener,
    url,
    mail,
    async stop() {
      clearInterval(poll);
      clearInterval(housekeeping);
      api.shutDown(); // health watches say NOT_SERVING and end, so they do not hold the stop for its grace
      await listener.close(10_000);
      // after the requests (which may queue mail), before the database: a send in progress finishes
      await mail.stop();
      if (relaxed !== db) await relaxed.destroy();
      await db.destroy();
    },
  };
}
