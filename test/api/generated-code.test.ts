/**
 * gen/ is committed and never edited by hand: regenerating it from proto/ must give the same files.
 * Fix a failure with `npm run generate`.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const root = path.resolve(import.meta.dirname, '../..');
const bin = path.join(root, 'node_modules', '.bin');

function listFiles(dir: string, base = dir): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? listFiles(full, base) : [path.relative(base, full)];
  }).sort();
}

describe('generated code', () => {
  let out: string;

  beforeAll(async () => {
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-gen-'));
    // protoc-gen-es is a local plugin found on PATH; node_modules/.bin first also picks Node 24 for it.
    await promisify(execFile)(path.join(bin, 'buf'), ['generate', '--output', out], {
      cwd: root,
      env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` },
    });
  });

  afterAll(() => {
    fs.rmSync(out, { recursive: true, force: true });
  });

  it('gen/ has exactly the files buf generate writes', () => {
    const expected = listFiles(path.join(out, 'gen'));
    expect(expected.length).toBeGreaterThan(0);
    expect(listFiles(path.join(root, 'gen'))).toEqual(expected);
  });

  it('every file in gen/ is what buf generate writes', () => {
    const stale = listFiles(path.join(out, 'gen')).filter(
      (file) => !fs.existsSync(path.join(root, 'gen', file)) || fs.readFileSync(path.join(out, 'gen', file), 'utf8') !== fs.readFileSync(path.join(root, 'gen', file), 'utf8'),
    );
    expect(stale).toEqual([]);
  });
});
