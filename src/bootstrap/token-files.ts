/** Files holding personal access tokens: the first start's and the bootstrap file's `pats`. */
import fs from 'node:fs';
import path from 'node:path';

/**
 * Writes a token into its file, followed by one newline as ZITADEL writes its PAT files, readable by
 * the owner only (an existing file is replaced, and its mode set again; a missing folder is made).
 */
export function writeTokenFile(file: string, token: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
}

/** The token a file holds, or undefined when there is no such file or it holds none. */
export function readTokenFile(file: string): string | undefined {
  try {
    const text = fs.readFileSync(file, 'utf8').trim();
    return text === '' ? undefined : text;
  } catch {
    return undefined;
  }
}
