/**
 * What an interrupted run (no global teardown) leaves behind: the run's snapshot folder and template
 * database (snapshot.ts) and its RSA key pool (key-pool.ts). The next run removes them once they are a
 * day old, so that runs side by side never take each other's.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** How old a leftover must be before a run removes it. */
export const STALE_MS = 24 * 3600 * 1000;

/** Removes the folders in the system's temporary folder whose names start with `prefix` and are stale. */
export function removeStaleTempFolders(prefix: string, now = Date.now()): void {
  for (const entry of fs.readdirSync(os.tmpdir())) {
    if (!entry.startsWith(prefix)) continue;
    const folder = path.join(os.tmpdir(), entry);
    if (now - fs.statSync(folder).mtimeMs > STALE_MS) fs.rmSync(folder, { recursive: true, force: true });
  }
}
