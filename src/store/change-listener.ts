/**
 * Revocation announcements from every process on this PostgreSQL database (LISTEN on the channel the
 * revoking statements NOTIFY, store/tokens.ts), and users whose access changed, over one dedicated
 * connection.
 *
 * The caches that depend on it must know when announcements could have been missed: `lost` is called
 * as soon as the connection fails or a heartbeat (`select 1` every second) goes unanswered, before
 * anything else; `listening` after LISTEN is in place again, so that the caller reloads what it
 * keeps from the database (announcements that arrive meanwhile are delivered too and must be kept).
 * The embedded database has no other process and needs no listener.
 */
import pg from 'pg';
import type { Logger } from 'pino';
import { decodeRevoked, REVOKED_CHANNEL, USERS_CHANNEL, type Revoked } from './tokens.ts';

export interface ChangeHandlers {
  announced(items: Revoked[]): void;
  /** A user's access changed (domain/user-lifecycle.ts): forget what is cached of it. */
  userChanged(userId: string): void;
  listening(): Promise<void>;
  lost(): void;
}

export interface ChangeListener {
  close(): Promise<void>;
}

const HEARTBEAT_MS = 1000;
const HEARTBEAT_TIMEOUT_MS = 2000;
const RETRY_MS = [100, 500, 1000, 2000, 5000];

export function listenForRevocations(databaseUrl: string, handlers: ChangeHandlers, log: Logger): ChangeListener {
  let closed = false;
  let client: pg.Client | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let retry: NodeJS.Timeout | undefined;
  let failures = 0;

  const drop = (reason: unknown): void => {
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = undefined;
    const lostClient = client;
    client = undefined;
    if (lostClient) {
      handlers.lost();
      lostClient.removeAllListeners('notification');
      lostClient.on('error', () => {});
      void lostClient.end().catch(() => {});
    }
    if (closed) return;
    const wait = RETRY_MS[Math.min(failures, RETRY_MS.length - 1)]!;
    failures += 1;
    if (failures === 1) log.warn({ err: reason }, 'revocation listener lost its connection; checking revocations in the database until it is back');
    retry = setTimeout(() => void connect(), wait);
    retry.unref();
  };

  const connect = async (): Promise<void> => {
    if (closed) return;
    const next = new pg.Client({ connectionString: databaseUrl, query_timeout: HEARTBEAT_TIMEOUT_MS, connectionTimeoutMillis: 3000, keepAlive: true });
    next.on('error', (error) => {
      if (client === next) drop(error);
    });
    next.on('end', () => {
      if (client === next) drop(new Error('connection ended'));
    });
    next.on('notification', (message) => {
      if (message.channel === REVOKED_CHANNEL && message.payload) handlers.announced(decodeRevoked(message.payload));
      if (message.channel === USERS_CHANNEL && message.payload) handlers.userChanged(message.payload);
    });
    try {
      await next.connect();
      await next.query(`listen ${REVOKED_CHANNEL}; listen ${USERS_CHANNEL}`);
      if (closed) {
        await next.end();
        return;
      }
      client = next;
      await handlers.listening();
      if (failures > 0) log.info('revocation listener connected again');
      failures = 0;
      heartbeat = setInterval(() => {
        next.query('select 1').catch((error: unknown) => {
          if (client === next) drop(error);
        });
      }, HEARTBEAT_MS);
      heartbeat.unref();
    } catch (error) {
      if (client === next) drop(error);
      else {
        next.on('error', () => {});
        void next.end().catch(() => {});
        drop(error);
      }
    }
  };

  void connect();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      if (heartbeat) clearInterval(heartbeat);
      const open = client;
      client = undefined;
      if (open) await open.end().catch(() => {});
    },
  };
}
