/**
 * The `gatehouse` CLI as a child process, for the suites that run it as an operator does: one command
 * to its end, or a server with its output collected, and waits on its health and its words.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const MAIN = path.resolve('src/main.ts');

export function cli(args: string[], env: Record<string, string>) {
  const result = spawnSync(process.execPath, [MAIN, ...args], { env: { ...process.env, GATEHOUSE_LOG_LEVEL: 'warn', ...env }, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

export function startProcess(args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, GATEHOUSE_LOG_LEVEL: 'warn', ...env } });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

export async function waitHealthy(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('server did not start');
}

export function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));
}

export async function waitForOutput(output: () => string, text: string): Promise<void> {
  for (let i = 0; i < 600 && !output().includes(text); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  if (!output().includes(text)) throw new Error(`no "${text}" in:\n${output()}`);
}
