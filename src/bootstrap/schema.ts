/**
 * The bootstrap file (docs/bootstrap.md): parsing and strict validation before
 * anything touches the database. YAML or JSON, told apart by nothing: the YAML parser reads JSON.
 * Every problem is collected and reported with the file and the path in the document.
 */
import { readFile } from 'node:fs/promises';
import YAML from 'yaml';
import type { BootstrapFile } from './document.ts';
import { BootstrapError } from './errors.ts';
import { readDocument } from './rules.ts';
import { Issues } from './validator.ts';

export * from './document.ts';
export { BootstrapError, type BootstrapIssue } from './errors.ts';

/** Parses and validates bootstrap text; throws a BootstrapError listing every problem. */
export function parseBootstrap(text: string, file: string): BootstrapFile {
  const issues = new Issues(file);
  const parsed = YAML.parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (parsed.errors.length > 0) {
    for (const error of parsed.errors) {
      const position = error.linePos?.[0];
      const where = position ? `line ${position.line}, column ${position.col}` : '';
      issues.add(where, error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, ''));
    }
    throw new BootstrapError(issues.list);
  }
  let value: unknown;
  try {
    value = parsed.toJS({ maxAliasCount: 100 });
  } catch (error) {
    issues.add('', `cannot be read: ${(error as Error).message}`);
    throw new BootstrapError(issues.list);
  }
  return validateBootstrap(value, file);
}

/** Validates an already parsed document (e.g. built in code); throws a BootstrapError. */
export function validateBootstrap(value: unknown, file: string): BootstrapFile {
  const issues = new Issues(file);
  const document = readDocument(issues, value ?? {});
  if (issues.list.length > 0 || document === undefined) throw new BootstrapError(issues.list);
  return { file, document };
}

export async function readBootstrapFile(path: string): Promise<BootstrapFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new BootstrapError([{ file: path, path: '', message: code === 'ENOENT' ? 'no such file' : `cannot be read (${code ?? 'error'})` }]);
  }
  return parseBootstrap(text, path);
}
