// Child processes of the harness (etcd, kube-apiserver). Each runs in its own process
// group so that stopping it also stops anything it forked, and every one is killed when
// the test process exits, whatever the reason, so no control plane outlives its test.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';

/**
 * Every harness work directory lives below this root; the leftover sweep looks for it. A test
 * run (scripts/test.mjs) gets a root of its own, so its sweep never touches the control planes
 * of another run or benchmark going on at the same time.
 */
export const HARNESS_ROOT = path.join(os.tmpdir(), 'csa-harness', process.env['CSA_HARNESS_RUN'] ?? 'adhoc');

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  readonly exited: Promise<number | null>;
  stop(): Promise<void>;
  /** SIGKILL, no grace: a crash. */
  kill(): Promise<void>;
  isRunning(): boolean;
}

const live = new Set<ChildProcess>();

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

process.on('exit', () => {
  for (const child of live) killGroup(child, 'SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    // A program with its own handler (the demo) stops things in order itself; the 'exit'
    // hook above still kills whatever it leaves behind.
    if (process.listenerCount(signal) > 0) return;
    for (const child of live) killGroup(child, 'SIGKILL');
    process.exit(128 + os.constants.signals[signal]);
  });
}

export function startProcess(name: string, command: string, args: readonly string[], logFile: string, env?: NodeJS.ProcessEnv): ManagedProcess {
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(command, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], ...(env !== undefined && { env }) });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  live.add(child);
  const exited = (async () => {
    const [code] = (await once(child, 'exit')) as [number | null];
    live.delete(child);
    return code;
  })();
  if (child.pid === undefined) throw new Error(`could not start ${name}: ${command}`);
  const pid = child.pid;
  let running = true;
  void exited.then(() => {
    running = false;
  });
  return {
    name,
    pid,
    logFile,
    exited,
    isRunning: () => running,
    async kill() {
      if (!running) return;
      killGroup(child, 'SIGKILL');
      await exited;
    },
    async stop() {
      if (!running) return;
      killGroup(child, 'SIGTERM');
      const timer = setTimeout(() => {
        killGroup(child, 'SIGKILL');
      }, 15_000);
      await exited;
      clearTimeout(timer);
      // Kill any stragglers the process group may still hold.
      killGroup(child, 'SIGKILL');
    },
  };
}

/** Processes on this machine whose command line points into the harness root. */
export function leftoverHarnessProcesses(): { pid: number; cmdline: string }[] {
  const found: { pid: number; cmdline: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    } catch {
      continue;
    }
    if (cmdline.includes(`${HARNESS_ROOT}/`) && !cmdline.includes('leftover')) {
      found.push({ pid: Number(entry), cmdline });
    }
  }
  return found;
}

export function tail(file: string, lines = 60): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return `(no log at ${file})`;
  }
}
