// Shared helpers for the drachtio integration tests: a real SipStack + drachtio server in this
// process, real drachtio-srf applications, real sipp processes (bounded, always killed).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import DrachtioSrf from 'drachtio-srf';
import { connectSrf as connectApp, disconnectSrf, startServer, type Server } from '../../../testkit/sip-server/drachtio';
import { sippResult, type SippResult } from '../../../testkit/sipp-process';

export { SECRET, startServer, disconnectSrf, type Server } from '../../../testkit/sip-server/drachtio';

// Driven untyped: the tests use more of drachtio-srf (proxy, b2bua, PRACK) than its declarations describe.
export const Srf: any = DrachtioSrf;

/** An srf application connected (inbound mode) and authenticated (testkit/sip-server/drachtio.ts), driven untyped. */
export const connectSrf = (port: number, tags?: string[]): Promise<any> => connectApp(port, tags);
export const SCENARIOS = path.join(__dirname, 'scenarios');

export type { SippResult };

const running = new Set<ChildProcess>();

/**
 * Run sipp bounded: -nostdin, -timeout, -timeout_error are always added; the process is killed
 * after `killAfterMs` whatever happens. Trace files go to a fresh temp directory.
 */
export function sipp(args: string[], opts: { killAfterMs?: number; trace?: boolean } = {}): { done: Promise<SippResult>; proc: ChildProcess } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sipp-'));
  const full = [...args, '-nostdin', '-timeout_error', '-trace_err'];
  if (opts.trace) full.push('-trace_msg', '-message_file', path.join(dir, 'messages.log'));
  if (!args.includes('-timeout')) full.push('-timeout', '20s');
  const proc = spawn('sipp', full, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(proc);
  const done = sippResult(proc, dir, { killAfterMs: opts.killAfterMs, messages: !!opts.trace, onExit: () => running.delete(proc) });
  return { done, proc };
}

export function killAllSipp(): void {
  for (const p of running) p.kill('SIGKILL');
  running.clear();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export async function until(pred: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timeout waiting for ${what}`);
    await sleep(20);
  }
}

export const SDP = ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'm=audio 40000 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', 'a=sendrecv', ''].join('\r\n');

/** Mocha hooks: before each test a fresh sip-server with a drachtio-srf app connected to it; after each, sipp killed, the app disconnected, the server closed. */
export function useServerAndSrf(set: (s: Server, srf: any) => void): void {
  let s: Server | undefined;
  let srf: any;
  beforeEach(async () => {
    s = await startServer();
    srf = await connectSrf(s.drachtioPort);
    set(s, srf);
  });
  afterEach(async () => {
    killAllSipp();
    disconnectSrf(srf);
    await s!.close();
  });
}
