import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LOCK_FILE, lockDataDir } from './data-dir-lock.ts';

const linux = fs.existsSync('/proc/self/stat');
const onLinux = linux ? it : it.skip;

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-lock-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function lockFile(): string {
  return path.join(fs.realpathSync(dir), LOCK_FILE);
}

function readLock(): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(lockFile(), 'utf8')) as Record<string, unknown>;
}

/** A lock file as another process would have left it: this machine's identity unless overridden. */
function plant(fields: Record<string, unknown>, ageMs = 0): void {
  const ours = { host: os.hostname(), pidNamespace: linux ? fs.readlinkSync('/proc/self/ns/pid') : null, processStart: null };
  fs.writeFileSync(lockFile(), JSON.stringify({ ...ours, command: 'gatehouse start', since: '2026-11-26T10:00:00.000Z', token: 'planted', ...fields }));
  if (ageMs > 0) fs.utimesSync(lockFile(), new Date(Date.now() - ageMs), new Date(Date.now() - ageMs));
}

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

function startOf(pid: number): string {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
}

describe('the embedded folder lock', () => {
  it('holds this process, its command and start, and is gone once released (twice is harmless)', async () => {
    const lock = await lockDataDir(dir);
    expect(readLock()).toMatchObject({ pid: process.pid, host: os.hostname(), since: expect.any(String), token: expect.any(String) });
    lock.release();
    lock.release();
    expect(fs.existsSync(lockFile())).toBe(false);
    (await lockDataDir(dir)).release();
  });

  it('refuses a second lock in this same process, naming the folder', async () => {
    const lock = await lockDataDir(dir);
    try {
      await expect(lockDataDir(dir)).rejects.toThrow(`the data folder ${dir} is in use by this process (pid ${process.pid}`);
    } finally {
      lock.release();
    }
  });

  it('refuses a live holder on this machine, naming its pid, command and start', async () => {
    plant({ pid: process.ppid, processStart: linux ? startOf(process.ppid) : null });
    await expect(lockDataDir(dir)).rejects.toThrow(
      `the data folder ${dir} is in use by pid ${process.ppid} (gatehouse start, since 2026-11-26T10:00:00.000Z): the embedded database belongs to one process`,
    );
    expect(readLock()).toMatchObject({ token: 'planted' });
  });

  it('takes over the lock of a process that has exited', async () => {
    plant({ pid: deadPid() });
    const lock = await lockDataDir(dir);
    expect(readLock()).toMatchObject({ pid: process.pid });
    lock.release();
  });

  onLinux('takes over a lock whose pid now belongs to a process started at another time', async () => {
    plant({ pid: process.ppid, processStart: '1' });
    (await lockDataDir(dir)).release();
  });

  it('takes over a lock naming this process that this process does not hold (a container is pid 1 at every start)', async () => {
    plant({ pid: process.pid });
    (await lockDataDir(dir)).release();
  });

  it('refuses a lock from another host while it is refreshed, and takes it over once it is not', async () => {
    plant({ pid: 1, host: 'elsewhere.test' }, 5_000);
    await expect(lockDataDir(dir)).rejects.toThrow(`is in use by pid 1 on elsewhere.test (gatehouse start`);
    plant({ pid: 1, host: 'elsewhere.test' }, 120_000);
    (await lockDataDir(dir)).release();
  });

  it('waits for a lock file being written, and takes over one left empty by a crash', async () => {
    fs.writeFileSync(lockFile(), '');
    const started = Date.now();
    const lock = await lockDataDir(dir);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
    lock.release();
    fs.writeFileSync(lockFile(), '{"pid":');
    fs.utimesSync(lockFile(), new Date(Date.now() - 10_000), new Date(Date.now() - 10_000));
    (await lockDataDir(dir)).release();
  });

  it('leaves a lock file alone on release once another process has replaced it', async () => {
    const lock = await lockDataDir(dir);
    plant({ pid: process.ppid });
    lock.release();
    expect(readLock()).toMatchObject({ token: 'planted' });
  });
});
