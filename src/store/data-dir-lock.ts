/**
 * The embedded database folder belongs to one process. PGlite is PostgreSQL running inside this
 * process: a second process that opens the same folder works on its own copy of the pages, and the
 * writes of whichever closes first are silently lost. So a process takes the folder's lock before
 * PGlite opens it, and a second one stops at once, naming the folder and the holder.
 *
 * The lock is a file, `gatehouse.lock` beside `pgdata`, created with O_EXCL (only one of two racing
 * processes creates it) and holding the holder's pid, host, command line and start time. It survives
 * a crash, so a lock whose holder is gone is taken over:
 * - on the same machine (same host name and pid namespace), the holder is gone when its pid is no
 *   longer running, or runs a process that started at another time (the pid was reused: Linux's
 *   /proc/PID/stat start time), or is this very process without holding the lock (a container's
 *   server is pid 1 at every start);
 * - from elsewhere (another host or container sharing the folder), its pid cannot be looked at: the
 *   holder touches the file every HEARTBEAT_MS, and a lock untouched for STALE_ELSEWHERE_MS is gone.
 * Taking over renames the stale file aside and checks that the file moved is the one judged stale;
 * if a racing process had just replaced it, the fresh lock is put back.
 *
 * The lock is released when the database closes and, as a backstop, when the process exits.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../config/index.ts';

/** Another process holds the embedded database folder: the command stops before touching it (exit 2). */
export class DataDirInUse extends ConfigError {}

export interface DataDirLock {
  /** The lock file. */
  readonly file: string;
  /** Removes the lock file if it is still ours; idempotent. */
  release(): void;
}

/** What the lock file holds (JSON). */
interface LockRecord {
  pid: number;
  host: string;
  /** Linux: the pid namespace (`pid:[4026531836]`); pids compare only within one. */
  pidNamespace: string | null;
  /** Linux: the holder's start time in clock ticks since boot (/proc/PID/stat), to tell a reused pid. */
  processStart: string | null;
  /** The holder's command line, e.g. `gatehouse start`. */
  command: string;
  /** When the lock was taken (ISO 8601). */
  since: string;
  /** Random: tells this lock from any other with the same pid. */
  token: string;
}

export const LOCK_FILE = 'gatehouse.lock';
const HEARTBEAT_MS = 10_000;
const STALE_ELSEWHERE_MS = 60_000;
/** A lock file still empty this long after its creation is a crash between create and write. */
const BEING_WRITTEN_MS = 2_000;

/** The locks this process holds: lock file → its token and heartbeat. */
const held = new Map<string, { token: string; heartbeat: NodeJS.Timeout }>();
let releaseOnExit = false;

function procStat(pid: number | 'self'): { state: string; start: string } | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // the command name may hold spaces and parentheses
    return { state: fields[0] ?? '', start: fields[19] ?? '' }; // fields 3 and 22 of proc(5)
  } catch {
    return undefined;
  }
}

function pidNamespace(): string | null {
  try {
    return fs.readlinkSync('/proc/self/ns/pid');
  } catch {
    return null;
  }
}

/** `gatehouse start` for this project's entry points, else the script and its arguments. */
function commandLine(): string {
  const [, script = '', ...args] = process.argv;
  const name = /(?:src[\\/]main\.ts|bin[\\/]gatehouse(?:\.js)?)$/.test(script) ? 'gatehouse' : path.basename(script);
  return [name, ...args].join(' ').slice(0, 200);
}

/** This process as a lock file names it. */
function ourRecord(): LockRecord {
  return {
    pid: process.pid,
    host: os.hostname(),
    pidNamespace: pidNamespace(),
    processStart: procStat('self')?.start ?? null,
    command: commandLine(),
    since: new Date().toISOString(),
    token: randomBytes(12).toString('hex'),
  };
}

function parse(text: string): LockRecord | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockRecord>;
    return typeof value.pid === 'number' && typeof value.token === 'string' && typeof value.host === 'string' ? (value as LockRecord) : undefined;
  } catch {
    return undefined;
  }
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function ageMs(file: string): number {
  try {
    return Date.now() - fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

type Holder = 'alive' | 'this process' | 'gone' | 'being written';

/** Whether the process a lock names still holds it. */
function holderOf(record: LockRecord | undefined, file: string): Holder {
  if (!record) return ageMs(file) < BEING_WRITTEN_MS ? 'being written' : 'gone';
  if (record.host !== os.hostname() || record.pidNamespace !== pidNamespace()) {
    return ageMs(file) < STALE_ELSEWHERE_MS ? 'alive' : 'gone';
  }
  if (record.pid === process.pid) return held.get(file)?.token === record.token ? 'this process' : 'gone';
  // Linux: /proc tells whether the pid runs, whether it is a zombie, and since when.
  const stat = procStat(record.pid);
  if (stat) {
    if (stat.state === 'Z' || stat.state === 'X') return 'gone';
    return record.processStart === null || stat.start === record.processStart ? 'alive' : 'gone';
  }
  // Elsewhere, or a /proc that hides other users' processes: whether a signal could reach the pid.
  try {
    process.kill(record.pid, 0);
    return 'alive';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? 'alive' : 'gone';
  }
}

function inUse(dataDir: string, record: LockRecord, holder: 'alive' | 'this process'): DataDirInUse {
  const who = holder === 'this process' ? `this process (pid ${record.pid})` : `pid ${record.pid}${record.host === os.hostname() ? '' : ` on ${record.host}`}`;
  return new DataDirInUse(
    `the data folder ${dataDir} is in use by ${who} (${record.command || 'unknown command'}, since ${record.since}): ` +
      'the embedded database belongs to one process; stop that one first, or give every process the same DATABASE_URL (PostgreSQL)',
  );
}

/** Moves a lock judged stale out of the way, unless a racing process replaced it in the meantime. */
function removeStale(file: string, judged: string): void {
  const aside = `${file}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    fs.renameSync(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // another process removed it first
    throw error;
  }
  if (readText(aside) !== judged) {
    // A fresh lock, taken between our reading and our renaming: put it back (link fails if yet another exists).
    try {
      fs.linkSync(aside, file);
    } catch {
      // a third process locked the folder in that instant; the next attempt reads its lock
    }
  }
  fs.rmSync(aside, { force: true });
}

function releaseAll(): void {
  for (const file of [...held.keys()]) release(file);
}

function release(file: string): void {
  const mine = held.get(file);
  if (!mine) return;
  clearInterval(mine.heartbeat);
  held.delete(file);
  try {
    if (parse(readText(file) ?? '')?.token === mine.token) fs.rmSync(file, { force: true });
  } catch {
    // the folder is gone (a test removing its temp folder): nothing left to release
  }
}

/**
 * Takes the lock of the embedded database folder `dataDir` (which must exist), or throws DataDirInUse
 * naming the folder and the process that holds it.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const file = path.join(fs.realpathSync(dataDir), LOCK_FILE);
  for (let attempt = 0; attempt < 250; attempt++) {
    const record = ourRecord();
    try {
      fs.writeFileSync(file, `${JSON.stringify(record)}\n`, { flag: 'wx', mode: 0o644 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const text = readText(file);
      if (text === undefined) continue; // released in between: try again
      const found = parse(text);
      const holder = holderOf(found, file);
      if (found && (holder === 'alive' || holder === 'this process')) throw inUse(dataDir, found, holder);
      if (holder === 'being written') await new Promise((resolve) => setTimeout(resolve, 20));
      else removeStale(file, text);
      continue;
    }
    const heartbeat = setInterval(() => {
      const now = new Date();
      fs.utimes(file, now, now, () => {}); // a lock file removed by hand stays removed
    }, HEARTBEAT_MS).unref();
    held.set(file, { token: record.token, heartbeat });
    if (!releaseOnExit) {
      releaseOnExit = true;
      process.on('exit', releaseAll);
    }
    return { file, release: () => release(file) };
  }
  throw new Error(`could not lock the data folder ${dataDir}: its lock file ${file} keeps changing`);
}
