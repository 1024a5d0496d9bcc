/**
 * The mail delivery worker (docs/decisions.md#mail-delivery). Messages wait in the `outbox` table
 * (written in the same transaction as the code they carry, see domain/outbox.ts) until this worker
 * has handed them to the SMTP server; nothing is kept in memory, so a restart loses nothing.
 *
 * Claiming: a short transaction picks one due row with `for update skip locked` and moves its
 * `next_attempt_at` one lease ahead. The send happens outside that transaction (on the embedded
 * database a transaction holds the only connection, and a dead SMTP server must not stall every
 * request), and other processes on the same database skip the row until the lease ends. A send is
 * aborted well before the lease ends, so two processes never send one row twice. A crash between
 * the send and the `sent_at` update sends the row again after the lease, with the same Message-ID
 * (`<outbox id@host>`), so receivers can tell it is the same message.
 *
 * Failures: attempts + 1, a short error (no credentials), and the next attempt after
 * min(30 s, 2^attempts s), so mail goes out within a minute of the SMTP server's return.
 *
 * Without GATEHOUSE_SMTP_URL (development), each due message is logged once at info, text body
 * included (the code is the point of the mail), and stays in the outbox as delivered to the log:
 * `sent_at` set, `last_error` LOGGED_WITHOUT_SMTP. It is not mailed when SMTP is configured later
 * (its code has long expired by then, and it must not wait in clear for that).
 *
 * docs/security.md 10.2: once a message is sent (or logged), its bodies are removed from the
 * outbox; recipient, subject and times stay, for the mail limits and for the operator. Sent rows
 * are pruned after 7 days by the housekeeping of every worker (at start, then every 10 minutes).
 */
import {
  anyMailDue,
  deleteSentMail,
  lockDueMails,
  lockNextDueMail,
  markMailSent,
  markMailsDelivered,
  postponeMail,
  recordMailFailure,
  type DueMail,
} from '../store/outbox.ts';
import { createSmtpTransport, redactedSmtpUrl, type MailTransport } from './smtp.ts';
import type { Logger } from 'pino';
import type { Config } from '../config/index.ts';
import type { DB } from '../store/database.ts';

/** What the worker uses: the database, the log, the instance, and the mail settings. */
export interface MailWorkerContext {
  db: DB;
  log: Logger;
  instanceId: string;
  config: Pick<Config, 'smtpUrl' | 'smtpFrom' | 'externalUrl'>;
}

export interface MailWorker {
  /** Stops polling and waits for a send in progress. */
  stop(): Promise<void>;
  /** Looks for due mail now instead of at the next tick (after enqueueMail). */
  kick(): void;
}

export interface MailWorkerOptions {
  /** Poll interval. Default 1000 ms. */
  intervalMs?: number;
  /** How long a claimed row is reserved for this process. Default 60 s. */
  leaseMs?: number;
  /** A send still running after this is aborted (and retried). Default 30 s; must be below the lease. */
  sendTimeoutMs?: number;
  /** Upper bound of the retry backoff. Default 30 s (docs/decisions.md#mail-delivery). */
  maxBackoffSeconds?: number;
  /** A transport to use instead of the one built from smtpUrl (tests). */
  transport?: MailTransport;
  /** Sent rows older than this are deleted. Default 7 days (docs/security.md 10.2). */
  keepSentSeconds?: number;
  /** How often the housekeeping deletes old sent rows. Default 10 minutes. */
  pruneIntervalMs?: number;
}

/** Marks rows a worker without SMTP delivered to its log: sent, but not mailed. */
export const LOGGED_WITHOUT_SMTP = 'not mailed: no SMTP server configured (message logged)';

const MAX_ERROR_LENGTH = 200;

/** The Message-ID of an outbox row: the same for every attempt. */
export function messageIdFor(outboxId: string, externalUrl: string): string {
  return `<${outboxId}@${new URL(externalUrl).hostname}>`;
}

/** A one-line error for the outbox row: code and message, credentials removed, bounded. */
export function shortError(error: unknown, smtpUrl: string | undefined): string {
  const e = error as { code?: unknown; message?: unknown; responseCode?: unknown };
  let text = typeof e?.message === 'string' ? e.message : String(error);
  if (typeof e?.code === 'string' && !text.startsWith(e.code)) text = `${e.code}: ${text}`;
  if (smtpUrl) {
    try {
      const url = new URL(smtpUrl);
      for (const secret of [url.password, decodeURIComponent(url.password)]) {
        if (secret.length >= 3) text = text.replaceAll(secret, '***');
      }
      text = text.replaceAll(smtpUrl, redactedSmtpUrl(smtpUrl));
    } catch {
      // an unparsable URL never reached the transport
    }
  }
  text = text.replace(/\s+/g, ' ').trim();
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}

export function startMailWorker(ctx: MailWorkerContext, options: MailWorkerOptions = {}): MailWorker {
  const { config, db, log, instanceId } = ctx;
  const intervalMs = options.intervalMs ?? 1000;
  const leaseMs = options.leaseMs ?? 60_000;
  const sendTimeoutMs = Math.min(options.sendTimeoutMs ?? 30_000, leaseMs / 2);
  const maxBackoff = options.maxBackoffSeconds ?? 30;
  const keepSentSeconds = options.keepSentSeconds ?? 7 * 86400;
  const pruneIntervalMs = options.pruneIntervalMs ?? 10 * 60_000;
  let prunedAt = 0;
  const transport = options.transport ?? (config.smtpUrl ? createSmtpTransport(config.smtpUrl) : undefined);
  if (!transport) log.info('GATEHOUSE_SMTP_URL is not set: mail is logged (text included) and kept in the outbox');

  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;

  /** One due row, reserved for this process for one lease; undefined when none is due. */
  async function claim(): Promise<DueMail | undefined> {
    return db.transaction().execute(async (tx) => {
      const row = await lockNextDueMail(tx, instanceId);
      if (!row) return undefined;
      await postponeMail(tx, row.id, leaseMs / 1000);
      return row;
    });
  }

  async function deliver(transport: MailTransport, row: DueMail): Promise<void> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new Error(`send took longer than ${sendTimeoutMs} ms`)), sendTimeoutMs);
    try {
      await transport.sendMail({
        from: config.smtpFrom,
        to: row.recipient,
        subject: row.subject,
        text: row.text_body,
        html: row.html_body,
        messageId: messageIdFor(row.id, config.externalUrl),
        signal: abort.signal,
      });
    } catch (error) {
      const attempts = row.attempts + 1;
      const delay = Math.min(maxBackoff, 2 ** attempts);
      const lastError = shortError(error, config.smtpUrl);
      await recordMailFailure(db, row.id, attempts, lastError, delay);
      log.warn({ outboxId: row.id, attempts, retryInSeconds: delay, error: lastError }, 'mail delivery failed; will retry');
      return;
    } finally {
      clearTimeout(timer);
    }
    await markMailSent(db, row.id);
    log.info({ outboxId: row.id, attempts: row.attempts + 1 }, 'mail sent');
  }

  /** Without SMTP: logs the due messages, once each, and records them as delivered to the log. */
  async function logUnsent(): Promise<number> {
    return db.transaction().execute(async (tx) => {
      const rows = await lockDueMails(tx, instanceId, 20);
      for (const row of rows) {
        log.info({ outboxId: row.id, to: row.recipient, subject: row.subject, text: row.text_body }, 'mail not sent (no SMTP configured): logged instead');
      }
      if (rows.length > 0) {
        await markMailsDelivered(tx, rows.map((r) => r.id), LOGGED_WITHOUT_SMTP);
      }
      return rows.length;
    });
  }

  /** docs/security.md 10.2: sent rows go after `keepSentSeconds`; any worker may do it, deleting twice is harmless. */
  async function pruneSent(): Promise<void> {
    if (Date.now() - prunedAt < pruneIntervalMs) return;
    prunedAt = Date.now();
    const deleted = await deleteSentMail(db, instanceId, keepSentSeconds);
    if (deleted > 0) log.info({ deleted }, 'old sent mail pruned from the outbox');
  }

  async function drain(): Promise<void> {
    await pruneSent();
    // A plain read first: an idle poll costs one query and never holds a connection in a transaction.
    if (!(await anyMailDue(db, instanceId))) return;
    if (!transport) {
      while (!stopped && (await logUnsent()) > 0);
      return;
    }
    while (!stopped) {
      const row = await claim();
      if (!row) return;
      await deliver(transport, row);
    }
  }

  function run(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    again = false;
    running = drain()
      .catch((error: unknown) => log.warn({ err: error }, 'mail worker poll failed'))
      .finally(() => {
        running = undefined;
        if (again) run();
      });
  }

  const timer = setInterval(run, intervalMs);
  timer.unref();
  run();

  return {
    kick: run,
    async stop() {
      if (stopped) return running;
      stopped = true;
      clearInterval(timer);
      await running;
      transport?.close();
    },
  };
}
