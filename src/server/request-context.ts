/**
 * Request ids: every request gets one (a client's own X-Request-Id when it is sane, else a new
 * UUID), echoed in the response, and carried by every log line written while the request is served
 * (through AsyncLocalStorage and pino's mixin), wherever in the code the line is written.
 *
 * And the process logger's two formats (docs/operations.md#logs): JSON lines for log shippers, or
 * pino's own pretty printer (pino-pretty) for a person at a terminal.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { LogFormat } from '../config/index.ts';

const current = new AsyncLocalStorage<string>();
const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFor(header: string | string[] | undefined): string {
  return typeof header === 'string' && SANE_ID.test(header) ? header : randomUUID();
}

export function withRequestId<T>(id: string, work: () => T): T {
  return current.run(id, work);
}

/** The process logger: JSON lines, with the request id of the request being served, if any. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    mixin: () => {
      const requestId = current.getStore();
      return requestId === undefined ? {} : { requestId };
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * The logger of `gatehouse start` and the CLI, in the configured format (GATEHOUSE_LOG_FORMAT):
 * `json` writes the lines above to standard output; `pretty` hands the same lines to pino-pretty,
 * which writes one readable line each (local time, level, message, then the fields), in colour on a
 * terminal. Synchronous like pino's own destination, so log lines and the CLI's other output on
 * standard output keep their order.
 */
export function createProcessLogger({ logLevel, logFormat }: { logLevel: string; logFormat: LogFormat }): Logger {
  if (logFormat === 'json') return createLogger(logLevel);
  return createLogger(logLevel, pretty({ sync: true, destination: 1, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true }));
}
