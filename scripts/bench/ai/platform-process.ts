/**
 * The call plane (sip-server + media-app, testkit/media-app/harness.ts) in a process of its own, for
 * benchmarks whose phones and vendor stand-ins would otherwise share its event loop and be counted
 * as the platform's time (scripts/bench/ai/turn-taking.ts). Started by `startPlatformProcess`: the
 * platform's settings in BENCH_PLATFORM_ENV (JSON), the database the parent uses in
 * TEST_DATABASE_URL with TEST_DB_ISOLATE=0; it prints `{"sipPort": n}` once listening and closes on
 * SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';
import { startPlatform } from '../../../testkit/media-app/harness';
import { testDatabaseUrl } from '../../../testkit/db';

export interface PlatformProcess {
  sipPort: number;
  close(): Promise<void>;
}

/** Starts this file as a child process with `env` as the platform's settings. */
export async function startPlatformProcess(env: Record<string, string>): Promise<PlatformProcess> {
  const child: ChildProcess = spawn(process.execPath, [...process.execArgv, __filename], {
    env: { ...process.env, ...env, TEST_DB_ISOLATE: '0', TEST_DATABASE_URL: await testDatabaseUrl(), BENCH_PLATFORM_ENV: JSON.stringify(env) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
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
    async close() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function main(): Promise<void> {
  const env = JSON.parse(process.env.BENCH_PLATFORM_ENV ?? '{}') as Record<string, string>;
  const p = await startPlatform(env);
  process.stdout.write(`${JSON.stringify({ sipPort: p.sipPort })}\n`);
  process.once('SIGTERM', () => {
    void p.close().finally(() => process.exit(0));
  });
}

if (require.main === module)
  main().catch((e: Error) => {
    console.error(e);
    process.exit(1);
  });
