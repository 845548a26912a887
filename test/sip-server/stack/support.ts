// Shared helpers for the stack tests: a stack on a free loopback port, a sipp runner, a raw UDP peer.
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { makeSipConfig, SipConfigInput } from '../../../sip-config';
import { Headers, randomToken, SipRequest, SipStack } from '../../../sip-server/stack';
import { freePort } from '../../../testkit/ports';

export const FAST_TIMERS = { t1: 50, t2: 400, t4: 500 };

export async function startStack(over: SipConfigInput = {}): Promise<SipStack> {
  const port = await freePort();
  const config = makeSipConfig({
    ...over,
    listen: { host: '127.0.0.1', port, transports: ['udp', 'tcp'], ...over.listen },
    timers: { ...FAST_TIMERS, ...over.timers },
  });
  const stack = new SipStack(config, { logger: pino({ level: process.env.LOG_LEVEL ?? 'silent' }) });
  await stack.start();
  return stack;
}

export interface SippResult {
  code: number | null;
  stdout: string;
  stderr: string;
  errors: string;
}

/** Run sipp to completion (bounded by -timeout and a hard kill), in a scratch directory. */
export function runSipp(args: string[], hardLimitMs = 60_000): Promise<SippResult> {
  const run = startSipp(args);
  const killer = setTimeout(run.stop, hardLimitMs);
  return run.done.finally(() => clearTimeout(killer));
}

/** Start sipp in the background (for sipp -sn uas); returns a stop() that kills it by pid. */
export function startSipp(args: string[]): { done: Promise<SippResult>; stop: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sipp-'));
  const p = spawn('sipp', [...args, '-nostdin', '-trace_err'], { cwd: dir });
  let stdout = '';
  let stderr = '';
  p.stdout.on('data', (d) => {
    stdout += d;
  });
  p.stderr.on('data', (d) => {
    stderr += d;
  });
  const done = new Promise<SippResult>((resolve) => {
    p.on('close', (code) => {
      let errors = '';
      for (const f of fs.readdirSync(dir)) if (f.endsWith('_errors.log')) errors += fs.readFileSync(path.join(dir, f), 'utf8');
      fs.rmSync(dir, { recursive: true, force: true });
      resolve({ code, stdout, stderr, errors });
    });
  });
  return {
    done,
    stop: () => {
      if (p.exitCode === null) p.kill('SIGKILL');
    },
  };
}

/** An out-of-dialog MESSAGE from `stack` to `target` carrying `body` (text/plain). */
export function message(stack: SipStack, target: string, body: string): SipRequest {
  const h = new Headers();
  h.append('From', `<${stack.localUri()}>;tag=${randomToken()}`);
  h.append('To', `<${target}>`);
  h.append('Call-ID', randomToken(12));
  h.append('CSeq', '1 MESSAGE');
  h.append('Content-Type', 'text/plain');
  return new SipRequest('MESSAGE', target, h, body);
}

/** `stack` answers every request it gets 200; the list it keeps them in, in order. */
export function answerAll200(stack: SipStack): SipRequest[] {
  const got: SipRequest[] = [];
  stack.on('request', (req, srv) => {
    got.push(req);
    srv.respond(req.makeResponse(200));
  });
  return got;
}

/** A raw UDP socket that records what it receives, with timestamps. */
export class UdpPeer {
  readonly socket = dgram.createSocket('udp4');
  readonly received: { at: number; text: string }[] = [];
  private waiters: (() => void)[] = [];
  port = 0;

  constructor(readonly host = '127.0.0.1') {}

  async bind(): Promise<this> {
    await new Promise<void>((r) => this.socket.bind(0, this.host, () => r()));
    this.port = this.socket.address().port;
    this.socket.on('message', (d) => {
      this.received.push({ at: Date.now(), text: d.toString() });
      const w = this.waiters;
      this.waiters = [];
      w.forEach((f) => f());
    });
    return this;
  }

  send(text: string | Buffer, port: number): Promise<void> {
    return new Promise((r) => this.socket.send(typeof text === 'string' ? Buffer.from(text) : text, port, '127.0.0.1', () => r()));
  }

  /** Wait until `pred` holds over the received list (or time out). */
  async waitFor(pred: (msgs: { at: number; text: string }[]) => boolean, timeoutMs = 5000): Promise<{ at: number; text: string }[]> {
    const end = Date.now() + timeoutMs;
    while (!pred(this.received)) {
      const left = end - Date.now();
      if (left <= 0) throw new Error(`timed out; received ${this.received.length}: ${this.received.map((m) => m.text.split('\r\n')[0]).join(' | ')}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.min(left, 50));
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
    return this.received;
  }

  close(): void {
    try {
      this.socket.close();
    } catch {
      /* closed */
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

let seq = 0;
/** Raw request text from a UDP peer at 127.0.0.x:port. */
export function rawRequest(
  method: string,
  peerHost: string,
  peerPort: number,
  stackPort: number,
  opts: { branch?: string; callId?: string; cseq?: number; toTag?: string; headers?: string[]; cseqMethod?: string } = {},
): string {
  const n = ++seq;
  const branch = opts.branch ?? `z9hG4bK-test-${n}-${Math.random().toString(36).slice(2)}`;
  return [
    `${method} sip:service@127.0.0.1:${stackPort} SIP/2.0`,
    `Via: SIP/2.0/UDP ${peerHost}:${peerPort};branch=${branch};rport`,
    'Max-Forwards: 70',
    `From: <sip:peer@${peerHost}:${peerPort}>;tag=from${n}`,
    `To: <sip:service@127.0.0.1:${stackPort}>${opts.toTag ? `;tag=${opts.toTag}` : ''}`,
    `Call-ID: ${opts.callId ?? `call-${n}-${Math.random().toString(36).slice(2)}`}`,
    `CSeq: ${opts.cseq ?? 1} ${opts.cseqMethod ?? method}`,
    `Contact: <sip:peer@${peerHost}:${peerPort}>`,
    ...(opts.headers ?? []),
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}

/** First line of each message received. */
export function firstLines(msgs: { text: string }[]): string[] {
  return msgs.map((m) => m.text.split('\r\n')[0]);
}
