/**
 * The call plane (sip-server + media-app, testkit/media-app/harness.ts) in a process of its own, for
 * benchmarks whose phones and vendor stand-ins would otherwise share its event loop and be counted
 * as the platform's time (scripts/bench/ai/turn-taking.ts). Started by `startPlatformProcess`: the
 * platform's settings in BENCH_PLATFORM_ENV (JSON), the database the parent uses in
 * TEST_DATABASE_URL with TEST_DB_ISOLATE=0; it prints `{"sipPort": n}` once listening and closes on
 * SIGTERM. `nodeArgs` go to the child's node (`--cpu-prof`: the profile is written as it closes);
 * `serve` names a module whose `serve(platform)` the child loads to answer the parent's `request`s
 * over the IPC channel (what the parent would otherwise read off an in-process node,
 * scripts/bench/twilio/platform-calls.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';
import { startPlatform, type Platform } from '../../../testkit/media-app/harness';
import { testDatabaseUrl } from '../../../testkit/db';
import { processCpuSeconds } from './stand-ins-process';

export interface PlatformProcess {
  sipPort: number;
  /** the child's process id (its CPU in /proc) */
  pid: number;
  /** Asks the child's `serve` module; rejects with its error. */
  request<T>(body: unknown): Promise<T>;
  /** CPU seconds the platform process (all its threads) has used so far (/proc/<pid>/stat) */
  cpuSeconds(): number;
  close(): Promise<void>;
}

/** What a `serve` module exports: the handler of the parent's requests. */
export type PlatformServe = (platform: Platform) => (body: unknown) => Promise<unknown>;

type Reply = { id: number; result?: unknown; error?: string };

/** Starts this file as a child process with `env` as the platform's settings. */
export async function startPlatformProcess(env: Record<string, string>, opts: { nodeArgs?: string[]; serve?: string } = {}): Promise<PlatformProcess> {
  // BENCH_PLATFORM_NODE_ARGS: node flags for the platform process only (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`)
  const envArgs = (process.env.BENCH_PLATFORM_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...envArgs, ...process.execArgv, ...(opts.nodeArgs ?? []), __filename], {
    env: {
      ...process.env,
      ...env,
      TEST_DB_ISOLATE: '0',
      TEST_DATABASE_URL: await testDatabaseUrl(),
      BENCH_PLATFORM_ENV: JSON.stringify(env),
      ...(opts.serve ? { BENCH_PLATFORM_SERVE: opts.serve } : {}),
    },
    stdio: ['ignore', 'pipe', 'inherit', ...(opts.serve ? (['ipc'] as const) : [])],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  child.on('message', (m: Reply) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error !== undefined) p?.reject(new Error(m.error));
    else p?.resolve(m.result);
  });
  const sipPort = await new Promise<number>((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout! });
    lines.on('line', (l) => {
      const m = /^\{"sipPort":(\d+)\}$/.exec(l.trim());
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`the platform process exited (${String(code)}) before it listened`)));
  });
  return {
    sipPort,
    pid: child.pid!,
    cpuSeconds: () => processCpuSeconds(child.pid!),
    request<T>(body: unknown): Promise<T> {
      if (!child.send) return Promise.reject(new Error('the platform process was started without `serve`'));
      const id = ++nextId;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: (v) => resolve(v as T), reject });
        child.send!({ id, body });
      });
    },
    async close() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function main(): Promise<void> {
  const env = JSON.parse(process.env.BENCH_PLATFORM_ENV ?? '{}') as Record<string, string>;
  const p = await startPlatform(env);
  let closing: Promise<void> | null = null;
  const shut = () => void (closing ??= p.close().finally(() => process.exit(0)));
  const serveFile = process.env.BENCH_PLATFORM_SERVE;
  if (serveFile) {
    const handle = ((await import(serveFile)) as { serve: PlatformServe }).serve(p);
    process.on('message', (m: { id: number; body: unknown }) => {
      handle(m.body).then(
        (result) => process.send!({ id: m.id, result }),
        (e: Error) => process.send!({ id: m.id, error: e.message }),
      );
    });
    // the parent gone (a crashed bench): the platform does not outlive it
    process.once('disconnect', shut);
  }
  process.stdout.write(`${JSON.stringify({ sipPort: p.sipPort })}\n`);
  process.once('SIGTERM', shut);
}

if (require.main === module)
  main().catch((e: Error) => {
    console.error(e);
    process.exit(1);
  });
