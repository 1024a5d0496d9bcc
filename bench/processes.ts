/**
 * How both benchmarks place their processes: the server (and a ceiling) on core 0, under taskset so
 * that every thread the runtime starts is there too, the load generator and PostgreSQL on core 1.
 * Without taskset, or on one core, nothing is pinned.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

export const pinned = fs.existsSync('/usr/bin/taskset') && os.availableParallelism() > 1;

/** Moves a running process, all its threads, to `core`. */
export function pin(pid: number | undefined, core: number): void {
  if (pinned && pid) spawnSync('/usr/bin/taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
}

/** The command that runs Node on the server's core: `[program, ...arguments]`, Node's arguments to follow. */
export function nodeOnServerCore(): [string, ...string[]] {
  return pinned ? ['/usr/bin/taskset', '-c', '0', process.execPath] : [process.execPath];
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `url` answers with anything but a 5xx. */
export async function waitFor(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url);
      if (response.status < 500) return;
    } catch {
      // not up yet
    }
    await sleep(100);
  }
  throw new Error(`${url} did not come up`);
}

/** SIGTERM, and the exit awaited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
