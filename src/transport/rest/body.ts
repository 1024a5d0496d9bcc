/**
 * Reads a REST request body up to a size limit, without buffering more than the limit.
 */
import type * as http from 'node:http';
import type * as http2 from 'node:http2';

export type BodyResult = { kind: 'ok'; bytes: Uint8Array } | { kind: 'too-large' };

export class BodyAbortedError extends Error {}

export function readBody(req: http.IncomingMessage | http2.Http2ServerRequest, maxBytes: number): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve({ kind: 'too-large' });
  if (req.readableEnded) return Promise.resolve({ kind: 'ok', bytes: new Uint8Array(0) });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        req.pause(); // the caller answers 413; the listener then drains the rest and closes (docs/security.md 10.8)
        resolve({ kind: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve({ kind: 'ok', bytes: Buffer.concat(chunks) });
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(new BodyAbortedError('request body could not be read', { cause: error }));
    };
    const onClose = (): void => {
      cleanup();
      reject(new BodyAbortedError('request closed before its body ended'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
