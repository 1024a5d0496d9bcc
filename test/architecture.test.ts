/**
 * The house's rules, read from the sources (as connect-es keeps its README snippets honest): a wing
 * of the domain is the only writer of its tables, the domain takes narrow arguments rather than the
 * whole server, imports never run in a circle, and a wing imports only wings below it.
 *
 * - No file of the endpoints (src/api, src/oauth, src/login) or of the bootstrap reconciler imports a
 *   writing function from src/store/: they call the domain's wings.
 * - No file under src/domain/ or src/mail/ imports src/context.ts.
 * - No import cycle among the files of src/.
 * - The wings stand on floors (kernel; instance and sign-in; tokens and credentials; users and
 *   passkeys; projects), and a wing imports only its own files and wings of lower floors.
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const SRC = path.join(ROOT, 'src');

/** The floor of each wing of src/domain/. */
const WING_FLOORS: Record<string, number> = {
  kernel: 1,
  instance: 2,
  'sign-in': 2,
  tokens: 3,
  credentials: 3,
  users: 4,
  passkeys: 4,
  projects: 5,
  federation: 5,
};

/** The names of the store's writing functions, by their verb. */
const WRITING = /^(insert|update|delete|upsert|replace|mark|set|take|lock|record|remember|clear|revoke|end|store)[A-Z]/;

interface Source {
  file: string;
  text: string;
}

function sources(dir: string): Source[] {
  const found: Source[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sources(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) {
      found.push({ file: path.relative(ROOT, full), text: fs.readFileSync(full, 'utf8') });
    }
  }
  return found;
}

/** Every relative import of a file (static, re-export and dynamic), with the names it takes when it names them. */
function importsOf(source: Source): Array<{ target: string; names: string[] }> {
  const found: Array<{ target: string; names: string[] }> = [];
  const pattern = /(?:import|export)\s+(?:type\s+)?(?:\{([^}]*)\}|\*\s+as\s+\w+|\w+)?\s*(?:,\s*\{([^}]*)\})?\s*from\s*'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/g;
  for (const match of source.text.matchAll(pattern)) {
    const spec = match[3] ?? match[4]!;
    const names = `${match[1] ?? ''},${match[2] ?? ''}`
      .split(',')
      .map((name) => name.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0]!.trim())
      .filter((name) => name !== '');
    found.push({ target: path.normalize(path.join(path.dirname(source.file), spec)), names });
  }
  return found;
}

const all = sources(SRC);

describe('the architecture', () => {
  it('the endpoints and the bootstrap reconciler write through the domain, never the store', () => {
    const writers = all
      .filter((s) => /^src\/(api|oauth|login|bootstrap)\//.test(s.file))
      .flatMap((s) => importsOf(s).filter((i) => i.target.startsWith('src/store/')).flatMap((i) => i.names.filter((n) => WRITING.test(n)).map((n) => `${s.file}: ${n}`)));
    expect(writers).toEqual([]);
  });

  it('the endpoints never import each other (what they share lives in src/http/ or below)', () => {
    const endpointOf = (file: string) => /^src\/(api|oauth|login)\//.exec(file)?.[1];
    const crossings = all.flatMap((s) => {
      const own = endpointOf(s.file);
      if (own === undefined) return [];
      return importsOf(s).filter((i) => endpointOf(i.target) !== undefined && endpointOf(i.target) !== own).map((i) => `${s.file} -> ${i.target}`);
    });
    expect(crossings).toEqual([]);
  });

  it('no file of the domain or the mail worker takes the whole server (src/context.ts)', () => {
    const takers = all.filter((s) => /^src\/(domain|mail)\//.test(s.file) && importsOf(s).some((i) => i.target === 'src/context.ts')).map((s) => s.file);
    expect(takers).toEqual([]);
  });

  it('no import runs in a circle', () => {
    const graph = new Map(all.map((s) => [s.file, importsOf(s).map((i) => i.target).filter((t) => t.startsWith('src/'))]));
    const circles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (file: string, trail: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'visiting') {
        circles.push([...trail.slice(trail.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'visiting');
      for (const next of graph.get(file) ?? []) visit(next, [...trail, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    expect(circles).toEqual([]);
  });

  it('every file of src/domain/ sits in a wing, and a wing imports only wings below it', () => {
    const wingOf = (file: string) => file.split('/')[2]!;
    const outside = all.filter((s) => s.file.startsWith('src/domain/') && !(wingOf(s.file) in WING_FLOORS && s.file.split('/').length === 4));
    expect(outside.map((s) => s.file)).toEqual([]);
    const upward = all
      .filter((s) => s.file.startsWith('src/domain/'))
      .flatMap((s) =>
        importsOf(s)
          .filter((i) => i.target.startsWith('src/domain/') && wingOf(i.target) !== wingOf(s.file) && WING_FLOORS[wingOf(i.target)]! >= WING_FLOORS[wingOf(s.file)]!)
          .map((i) => `${s.file} -> ${i.target}`),
      );
    expect(upward).toEqual([]);
  });

  it('reads the whole source tree', () => {
    expect(all.length).toBeGreaterThan(200);
    expect(all.some((s) => s.file === 'src/domain/kernel/events.ts')).toBe(true);
  });
});
