/**
 * Docs stay true. The shell examples of README.md and of every page under docs/ run, as a reader
 * would run them, against one real server started with examples/bootstrap.yaml: each page's
 * ```sh blocks in one bash session (so variables carry from block to block), with
 * http://localhost:8080 replaced by the server's URL (in the blocks, and in the arguments of every
 * curl, so that scripts the pages source reach it too) and the project's Node 24 first on PATH. A
 * second server with the same file stands for the upstream identity provider of the federation guide
 * (docs/federation.md), at http://127.0.0.1:8081 in the pages, replaced by its URL in the same way;
 * the first server may call it (GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS, as the guide says to set). A
 * curl that gets an HTTP error fails the page; so does any failing command (`set -euo pipefail`).
 * ```ts blocks are written to a file in the clone and run with node in the same session, where
 * every shell variable is exported (TOKEN and the like).
 *
 * Conventions the pages follow:
 * - Comment lines right after a command (no blank line between) show its output: loose JSON where
 *   `…` stands for anything (`# {"active":true,"scope":"openid …",…}`, checked against the last
 *   JSON answer printed since the previous check), or plain lines (checked against the last lines
 *   printed). A comment after a blank line is prose.
 * - `<!-- docs-test: skip (why) -->` on the line before a fence leaves that block out (it starts a
 *   server, needs a browser, or installs something).
 *
 * Besides: every relative link of README.md, SECURITY.md, bench/README.md and docs/*.md names a file
 * of the repository (and an existing heading for `#anchor`s); docs/configuration.md lists exactly
 * the variables the configuration code reads; the whole documents docs/bootstrap.md shows are valid
 * bootstrap files; no file points outside the repository; and the pages speak of the product, not of
 * how it was developed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { KNOWN_VARIABLES } from '../../src/config/index.ts';
import { parseBootstrap } from '../../src/bootstrap/schema.ts';
import { EVENT_AGGREGATES } from '../../src/domain/kernel/event-types.ts';
import { startTestServer, type TestServer } from '../support/gatehouse.ts';
import { freePort } from '../support/ports.ts';
import { anchors, codeBlocks, jsonValues, links, mismatches, parsePattern, textMatcher, type CodeBlock } from './markdown.ts';

const ROOT = path.resolve('.');
/** The base URL the pages use; the docs test puts its server's in its place. */
const DOCS_URL = 'http://localhost:8080';
/** The upstream identity provider's base URL in docs/federation.md; the docs test's second server takes its place. */
const UPSTREAM_URL = 'http://127.0.0.1:8081';
const DOC_PAGES = fs
  .readdirSync(path.join(ROOT, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .sort()
  .map((name) => `docs/${name}`);
/** The README first, then the guide a newcomer reads next, then the other pages. */
const RUN_ORDER = ['README.md', 'docs/getting-started.md', ...DOC_PAGES.filter((page) => page !== 'docs/getting-started.md')];
const LINKED_PAGES = ['README.md', 'SECURITY.md', 'bench/README.md', ...DOC_PAGES];

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const runnable = (block: CodeBlock) => (block.lang === 'sh' || block.lang === 'ts') && block.skip === undefined;

interface Expectation {
  page: string;
  line: number;
  lines: string[];
}

interface Script {
  text: string;
  expectations: Expectation[];
  blocks: CodeBlock[];
}

/**
 * A page's runnable blocks as one bash script: a marker before each block and before each expected
 * output, so that the output can be cut back into the stretch each comment speaks of.
 */
function pageScript(page: string, urls: { baseUrl: string; upstreamUrl: string }, snippetDir: string): Script {
  const { baseUrl, upstreamUrl } = urls;
  const slashes = (url: string) => url.replaceAll('/', '\\/');
  const blocks = codeBlocks(read(page)).filter(runnable);
  const expectations: Expectation[] = [];
  const out: string[] = [
    'set -euo pipefail',
    'set -a', // every variable exported: the ts snippets read TOKEN and the like from the environment
    `cd ${JSON.stringify(ROOT)}`,
    // curl goes to the test servers also from scripts the pages source (examples/sign-in.sh); an HTTP
    // error of any curl (in a pipe or a $(…) too) is named on stderr, and fails the command
    // `npx buf` is the clone's buf (node_modules/.bin is first on PATH), without npx's half second of start-up
    `npx() { if [ "$1" = buf ]; then shift; buf "$@"; else command npx "$@"; fi; }`,
    `curl() { local args=("\${@//${slashes(DOCS_URL)}/${slashes(baseUrl)}}"); command curl --fail-with-body "\${args[@]//${slashes(UPSTREAM_URL)}/${slashes(upstreamUrl)}}" || { local status=$?; printf '@@CURL-FAILED %s: curl %s\\n' "$status" "$*" >&2; return "$status"; }; }`,
  ];
  blocks.forEach((block, index) => {
    const body = block.body.replaceAll(DOCS_URL, baseUrl).replaceAll(UPSTREAM_URL, upstreamUrl);
    let lines = body.split('\n');
    if (block.lang === 'ts') {
      const file = path.join(snippetDir, `${page.replace(/[^a-z0-9]+/gi, '-')}-${block.line}.ts`);
      fs.writeFileSync(file, body);
      // trailing `//` comments right after the code show what the snippet prints
      let first = lines.length;
      while (first > 0 && lines[first - 1]!.startsWith('//')) first--;
      const shown = first > 0 && first < lines.length && lines[first - 1]!.trim() !== '' ? lines.slice(first).map((line) => `#${line.slice(2)}`) : [];
      lines = [`node ${JSON.stringify(file)}`, ...shown];
    }
    out.push(`printf '\\n@@BLOCK ${index}@@\\n'`);
    let afterCode = false;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (afterCode && line.startsWith('#')) {
        const shown: string[] = [];
        while (i < lines.length && lines[i]!.startsWith('#')) shown.push(lines[i++]!.replace(/^#\s?/, ''));
        i--;
        out.push(`printf '\\n@@EXPECT ${expectations.length}@@\\n'`, ...shown.map((text) => `# ${text}`));
        expectations.push({ page, line: block.line, lines: shown });
        afterCode = false;
        continue;
      }
      out.push(line);
      afterCode = line.trim() !== '' && !line.trimStart().startsWith('#');
    }
  });
  out.push(`printf '\\n@@END@@\\n'`);
  return { text: `${out.join('\n')}\n`, expectations, blocks };
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function runBash(file: string, timeoutMs: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [file], {
      cwd: ROOT,
      env: { ...process.env, PATH: `${path.join(ROOT, 'node_modules/.bin')}:${process.env['PATH'] ?? ''}` },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group, so that a page that hangs is ended with everything it started
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      stderr += `\n(the page's examples did not finish within ${timeoutMs / 1000} s)`;
    }, timeoutMs);
    child.once('error', reject);
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** Where the output shown by one expected-output comment departs from what was printed. */
function check(expectation: Expectation, printed: string): string[] {
  const shown = expectation.lines.join('\n').trim();
  if (shown.startsWith('{') || shown.startsWith('[')) {
    const values = jsonValues(printed);
    if (values.length === 0) return [`printed no JSON: ${JSON.stringify(printed.slice(-500))}`];
    return mismatches(parsePattern(shown), values[values.length - 1]);
  }
  const expected = expectation.lines.map((line) => line.trim()).filter((line) => line !== '');
  const actual = printed.split('\n').map((line) => line.trim()).filter((line) => line !== '').slice(-expected.length);
  return expected.flatMap((line, i) => (textMatcher(line).test(actual[i] ?? '') ? [] : [`line ${i + 1}: printed ${JSON.stringify(actual[i])}, not ${JSON.stringify(line)}`]));
}

describe('the examples of the README and the docs, against a real server', () => {
  let server: TestServer;
  let upstream: TestServer;
  let baseUrl: string;
  const snippetDir = path.join(ROOT, 'tmp', `docs-test-${process.pid}-${randomBytes(3).toString('hex')}`);

  beforeAll(async () => {
    fs.mkdirSync(snippetDir, { recursive: true });
    const port = await freePort();
    baseUrl = `http://localhost:${port}`; // a host name, as in the docs (passkeys need one)
    const example = parse(read('examples/bootstrap.yaml')) as unknown;
    // the upstream on 127.0.0.1, as in the guide: another host than localhost keeps browser cookies apart
    const [first, second] = await Promise.allSettled([
      startTestServer(example, { GATEHOUSE_PORT: String(port), GATEHOUSE_EXTERNAL_URL: baseUrl, GATEHOUSE_IDP_ALLOW_PRIVATE_NETWORKS: 'true' }),
      startTestServer(example),
    ]);
    // both kept before a failure is thrown, so that afterAll stops the one that started
    if (first.status === 'fulfilled') server = first.value;
    if (second.status === 'fulfilled') upstream = second.value;
    if (first.status === 'rejected') throw first.reason;
    if (second.status === 'rejected') throw second.reason;
  });

  afterAll(async () => {
    await Promise.all([server?.stop(), upstream?.stop()]);
    fs.rmSync(snippetDir, { recursive: true, force: true });
  });

  it('has examples to run in the README and the getting started guide', () => {
    expect(codeBlocks(read('README.md')).filter(runnable).length).toBeGreaterThanOrEqual(1);
    expect(codeBlocks(read('docs/getting-started.md')).filter(runnable).length).toBeGreaterThanOrEqual(5);
  });

  it.each(RUN_ORDER.filter((page) => codeBlocks(read(page)).some(runnable)))('%s: every example answers as the page says', async (page) => {
    const script = pageScript(page, { baseUrl, upstreamUrl: upstream.config.externalUrl }, snippetDir);
    const file = path.join(snippetDir, `${page.replace(/[^a-z0-9]+/gi, '-')}.sh`);
    fs.writeFileSync(file, script.text);
    const run = await runBash(file, 60_000);
    // [output, kind, n, output, kind, n, …]: each marker's kind and number, between the stretches printed
    const parts = run.stdout.split(/\n@@(BLOCK|EXPECT) (\d+)@@\n|\n@@END@@\n/);
    const lastBlock = [...run.stdout.matchAll(/@@BLOCK (\d+)@@/g)].pop()?.[1];
    const failedBlock = lastBlock === undefined ? undefined : script.blocks[Number(lastBlock)];
    const where = failedBlock ? `${page}:${failedBlock.line}` : page;
    expect({
      where,
      status: run.status,
      curlErrors: run.stderr.split('\n').filter((line) => line.startsWith('@@CURL-FAILED')),
      stderr: run.status === 0 ? '' : run.stderr.slice(-3000),
    }).toEqual({ where, status: 0, curlErrors: [], stderr: '' });
    if (!run.stdout.includes('\n@@END@@\n')) throw new Error(`${where}: the examples stopped early\n${run.stderr}`);
    const problems: string[] = [];
    for (let i = 1; i < parts.length; i += 3) {
      if (parts[i] !== 'EXPECT') continue;
      const expectation = script.expectations[Number(parts[i + 1])]!;
      for (const problem of check(expectation, parts[i - 1] ?? '')) {
        problems.push(`${expectation.page}:${expectation.line}: ${expectation.lines.join(' ')}\n    ${problem}`);
      }
    }
    expect(problems).toEqual([]);
  }, 90_000);
});

describe('links', () => {
  it.each(LINKED_PAGES)('%s: every relative link names a file of the repository and an existing heading', (page) => {
    const broken: string[] = [];
    for (const { target, line } of links(read(page))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [file = '', anchor] = target.split('#') as [string, string | undefined];
      const resolved = file === '' ? path.join(ROOT, page) : path.resolve(path.dirname(path.join(ROOT, page)), decodeURIComponent(file));
      if (!resolved.startsWith(`${ROOT}${path.sep}`)) broken.push(`${page}:${line}: ${target} points outside the repository`);
      else if (!fs.existsSync(resolved)) broken.push(`${page}:${line}: ${target}: no such file`);
      else if (anchor !== undefined) {
        if (!resolved.endsWith('.md')) broken.push(`${page}:${line}: ${target}: an anchor into a file that is not Markdown`);
        else if (!anchors(fs.readFileSync(resolved, 'utf8')).has(anchor)) broken.push(`${page}:${line}: ${target}: no heading with that anchor`);
      }
    }
    expect(broken).toEqual([]);
  });

  it.each([...LINKED_PAGES, 'CONTRIBUTING.md', 'test/security/README.md'])('%s: every path of the repository it names in code exists', (page) => {
    const named = [...read(page).matchAll(/`((?:src|test|bin|bench|examples|docs|proto|gen)\/[^`\s:#<>*…]+)(?:[:#][^`\s]*)?`/g)].map((match) => match[1]!);
    expect(named.filter((file) => !fs.existsSync(path.join(ROOT, file)))).toEqual([]);
  });

  it('every page and heading the code and the tests cite exists', () => {
    const files = spawnSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', 'src', 'test', 'bin', 'bench'], { cwd: ROOT, encoding: 'utf8' }).stdout.split('\n');
    const rules = new Set([...read('docs/security.md').matchAll(/^### (10\.\d+)\b/gm)].map((match) => match[1]!));
    const broken: string[] = [];
    for (const file of files.filter((name) => /\.(ts|js|mjs)$/.test(name) && fs.existsSync(path.join(ROOT, name)))) {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      for (const [cited, page = '', anchor] of text.matchAll(/\b((?:docs\/[a-z-]+|README|CONTRIBUTING|SECURITY)\.md)(?:#([a-z0-9-]+))?/g)) {
        if (!fs.existsSync(path.join(ROOT, page))) broken.push(`${file}: ${cited}: no such page`);
        else if (anchor !== undefined && !anchors(read(page)).has(anchor)) broken.push(`${file}: ${cited}: no such heading`);
      }
      for (const [cited, rule = ''] of text.matchAll(/docs\/security\.md,? (10\.\d+)/g)) {
        if (!rules.has(rule)) broken.push(`${file}: ${cited}: no such rule`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('docs/configuration.md', () => {
  /** Every variable the configuration code reads: `text(env, 'X')`, `integer(env, 'X', …)`, `env['X']`, `process.env.X`. */
  function variablesRead(): Set<string> {
    const names = new Set<string>();
    const config = read('src/config/index.ts');
    for (const match of config.matchAll(/\(\s*env\s*,\s*['"]([A-Z][A-Z0-9_]*)['"]/g)) names.add(match[1]!);
    for (const match of config.matchAll(/\benv\s*(?:\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\]|\.([A-Z][A-Z0-9_]*)\b)/g)) names.add((match[1] ?? match[2])!);
    const sources = spawnSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', 'src'], { cwd: ROOT, encoding: 'utf8' }).stdout.split('\n');
    for (const file of sources.filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts') && fs.existsSync(path.join(ROOT, name)))) {
      for (const match of read(file).matchAll(/process\.env(?:\[\s*['"]((?:GATEHOUSE_|DATABASE_)[A-Z0-9_]*)['"]\s*\]|\.((?:GATEHOUSE_|DATABASE_)[A-Z0-9_]*))/g)) {
        names.add((match[1] ?? match[2])!);
      }
    }
    return names;
  }

  /** The variables the page's tables list, one per row, in the first column. */
  function variablesListed(): Set<string> {
    const names = new Set<string>();
    for (const line of read('docs/configuration.md').split('\n')) {
      const cell = /^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|/.exec(line)?.[1];
      if (cell !== undefined) names.add(cell);
    }
    return names;
  }

  it('lists exactly the variables the configuration code reads', () => {
    const inCode = variablesRead();
    expect(inCode.size).toBeGreaterThan(25); // the patterns above still find the reads
    expect([...variablesListed()].sort()).toEqual([...inCode].sort());
  });

  it('the start reports none of them as unknown', () => {
    const known = new Set<string>(KNOWN_VARIABLES);
    expect([...variablesRead()].filter((name) => !known.has(name))).toEqual([]);
  });
});

describe('docs/bootstrap.md', () => {
  it('shows documents the bootstrap reader accepts', () => {
    // the blocks that are whole documents (the others show one part, such as a list of public keys)
    const documents = codeBlocks(read('docs/bootstrap.md')).filter(
      (block) => block.lang === 'yaml' && Object.keys((parse(block.body) ?? {}) as object).every((key) => ['features', 'security', 'orgs'].includes(key)),
    );
    expect(documents.length).toBeGreaterThanOrEqual(2);
    for (const block of documents) expect(() => parseBootstrap(block.body, `docs/bootstrap.md:${block.line}`)).not.toThrow();
  });
});

describe('docs/events.md', () => {
  it('lists exactly the event types the domain appends (src/domain/kernel/event-types.ts)', () => {
    const listed = [...read('docs/events.md').matchAll(/^\| `([a-z_]+(?:\.[a-z_]+)+)` \|/gm)].map((match) => match[1]!);
    expect([...listed].sort()).toEqual(Object.keys(EVENT_AGGREGATES).sort());
  });
});

describe('the repository speaks for itself', () => {
  const outside = ['..', 'shared'].join('/');

  it(`no file points to ${outside}`, () => {
    const files = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' }).stdout.split('\0');
    const pointing = files.filter((file) => {
      if (file === '' || !fs.existsSync(path.join(ROOT, file)) || fs.statSync(path.join(ROOT, file)).isDirectory()) return false;
      const content = fs.readFileSync(path.join(ROOT, file));
      return !content.includes(0) && content.toString('utf8').includes(outside);
    });
    expect(pointing).toEqual([]);
  });

  it('the README is a front page of fewer than 250 lines', () => {
    expect(read('README.md').split('\n').length).toBeLessThan(250);
  });

  it.each(['README.md', 'SECURITY.md', ...DOC_PAGES])('%s says nothing of how Gatehouse was developed', (page) => {
    const text = read(page);
    const diary = [
      ...text.matchAll(/\bsessions? \d+/gi),
      ...text.matchAll(/\bissues? #?\d+/gi),
      ...text.matchAll(/`(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}`/g),
    ].map((match) => match[0]);
    expect(diary).toEqual([]);
  });
});
