/**
 * Starts a running Gatehouse and stops it: composition (server/compose.ts: database, migrations,
 * master key, instance, keys, caches), the listener with its dispatch (server/dispatch.ts), the
 * background jobs (server/jobs.ts) and the mail worker. Used by `gatehouse start`, the tests and the
 * benchmark.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/index.ts';
import type { Gatehouse } from '../context.ts';
import { passkeyStatus } from '../domain/passkeys/passkey-party.ts';
import { createSmtpTransport } from '../mail/smtp.ts';
import { startMailWorker, type MailWorker } from '../mail/worker.ts';
import type { DB } from '../store/database.ts';
import type { MasterKey } from '../domain/kernel/crypto.ts';
import { compose } from './compose.ts';
import { createDispatch } from './dispatch.ts';
import { startJobs } from './jobs.ts';
import { listen, type Listener } from './listen.ts';
import { createProcessLogger } from './request-context.ts';

export interface Running {
  gh: Gatehouse;
  listener: Listener;
  url: string;
  /** The outbox delivery worker (docs/decisions.md#mail-delivery); `kick()` after queueing mail sends it without waiting for the next poll. */
  mail: MailWorker;
  /** SIGTERM behaviour: stop accepting, finish in-flight requests (up to 10 s), stop workers, close the database. */
  stop(): Promise<void>;
}

export interface StartOptions {
  config: Config;
  log?: Logger;
  /** Runs after migrations, before serving: first-run defaults or a bootstrap file (with the master key). */
  prepare?: (db: DB, masterKey: MasterKey) => Promise<void>;
}

export async function startServer({ config, log = createProcessLogger(config), prepare }: StartOptions): Promise<Running> {
  // A malformed GATEHOUSE_SMTP_URL fails the start here, before the database is opened.
  const smtpTransport = config.smtpUrl ? createSmtpTransport(config.smtpUrl) : undefined;
  const composition = await compose({ config, log, prepare });
  const { gh } = composition;
  const dispatch = createDispatch(composition);

  const listener = await listen({
    host: config.host,
    port: config.port,
    tls: config.tlsCert && config.tlsKey ? { cert: config.tlsCert, key: config.tlsKey } : undefined,
    http1: dispatch.http1,
    http2: dispatch.http2,
  }).catch(async (error: unknown) => {
    await composition.close(); // a start that cannot listen leaves the database (and the embedded folder) free
    throw error;
  });
  const jobs = await startJobs(composition);

  const url = `${config.tlsCert ? 'https' : 'http'}://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${listener.port}`;
  log.info({ port: listener.port, url, issuer: config.externalUrl }, `listening on ${config.host === '0.0.0.0' ? `port ${listener.port} of every address` : url}, issuer ${config.externalUrl}`);
  // An IP-address host is no valid relying party id (docs/passkeys.md#the-relying-party); say so once, at start.
  const passkeys = passkeyStatus(config);
  if (passkeys.enabled) log.info({ passkeys: true }, passkeys.message);
  else log.warn({ passkeys: false }, passkeys.message);
  if (config.idpAllowPrivateNetworks) log.warn({ idpAllowPrivateNetworks: true }, 'GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS is on: identity providers may be reached over http and at private addresses (for development and tests only)');
  const mail = startMailWorker(gh, { transport: smtpTransport });

  return {
    gh,
    listener,
    url,
    mail,
    async stop() {
      await jobs.stop();
      dispatch.shutDown(); // health watches say NOT_SERVING and end, so they do not hold the stop for its grace
      await listener.close(10_000);
      // after the requests (which may queue mail), before the database: a send in progress finishes
      await mail.stop();
      await composition.close();
    },
  };
}
