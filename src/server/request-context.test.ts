import { Writable } from 'node:stream';
import { createLogger, requestIdFor, withRequestId } from './request-context.ts';

it.each([
  ['a sane id is kept', 'req-42.a:b_c', 'req-42.a:b_c'],
  ['an id with spaces is replaced', 'a b', undefined],
  ['an overlong id is replaced', 'x'.repeat(129), undefined],
  ['repeated headers are replaced', ['a', 'b'], undefined],
])('%s', (_name, header, kept) => {
  const id = requestIdFor(header);
  if (kept) expect(id).toBe(kept);
  else expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
});

it('log lines written while serving a request carry its id, across awaits', async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const log = createLogger('info', sink);
  await withRequestId('r-1', async () => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    log.info('inside');
  });
  log.info('outside');
  expect(JSON.parse(lines[0]!)).toMatchObject({ requestId: 'r-1', msg: 'inside' });
  expect(JSON.parse(lines[1]!).requestId).toBeUndefined();
});
