/**
 * Request ids: every request gets one (a client's own X-Request-Id when it is sane, else a new
 * UUID), echoed in the response, and carried by every log line written while the request is served
 * (through AsyncLocalStorage and pino's mixin), wherever in the code the line is written.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import pino, { type DestinationStream, type Logger } from 'pino';

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
