// Shared helpers for the drachtio integration tests: a real SipStack + drachtio server in this
// process, real drachtio-srf applications, real sipp processes (bounded, always killed).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import DrachtioSrf from 'drachtio-srf';
import { makeSipConfig, type SipConfigInput } from '../../../sip-config';
import { SipStack } from '../../../sip-server/stack';
import { startDrachtio, type RunningDrachtio, type OutboundTarget } from '../../../sip-server/drachtio';
import { freePort } from '../../../testkit/ports';
import { sippResult, type SippResult } from '../../../testkit/sipp-process';

// Driven untyped: the tests use more of drachtio-srf (proxy, b2bua, PRACK) than its declarations describe.
export const Srf: any = DrachtioSrf;

export const SECRET = 'cymru';
export const SCENARIOS = path.join(__dirname, 'scenarios');

export interface Server {
  stack: SipStack;
  drachtio: RunningDrachtio;
  sipPort: number;
  drachtioPort: number;
  close(): Promise<void>;
}

export async function startServer(opts: { outboundTargets?: OutboundTarget[]; config?: SipConfigInput; autoRespondUa?: string; keepOrphanedDialogs?: boolean } = {}): Promise<Server> {
  const sipPort = await freePort();
  const drachtioPort = await freePort();
  const config = makeSipConfig({
    listen: { host: '127.0.0.1', port: sipPort, transports: ['udp', 'tcp'] },
    timers: { t1: 500, t2: 4000, t4: 5000 },
    drachtio: { host: '127.0.0.1', port: drachtioPort, secret: SECRET },
    ...opts.config,
  });
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const stack = new SipStack(config, { logger });
  await stack.start();
  const drachtio = await startDrachtio(stack, {
    host: '127.0.0.1',
    port: drachtioPort,
    secret: SECRET,
    outboundTargets: opts.outboundTargets,
    logger,
    optionsAutoRespondUserAgent: opts.autoRespondUa,
    keepOrphanedDialogs: opts.keepOrphanedDialogs,
  });
  return {
    stack,
    drachtio,
    sipPort,
    drachtioPort,
    async close() {
      await drachtio.close();
      await stack.stop();
    },
  };
}

/** An srf application connected (inbound mode) and authenticated. */
export function connectSrf(port: number, tags?: string[]): Promise<any> {
  const srf = tags ? new Srf(tags) : new Srf();
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('srf did not connect')), 5000);
    srf.connect({ host: '127.0.0.1', port, secret: SECRET, reconnect: { maxAttempts: 1 } });
    srf.on('connect', (err: Error | null) => {
      clearTimeout(t);
      if (err) reject(err);
      else resolve(srf);
    });
    srf.on('error', () => undefined);
  });
}

export function disconnectSrf(srf: any): void {
  try {
    srf.disconnect();
  } catch {
    /* already gone */
  }
}

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
