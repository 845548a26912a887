// Runs generated malformed SIP messages against a real SipStack (UDP and TCP) in batches, with a
// liveness probe (a valid OPTIONS must get 200) after every batch, and reports what it saw: internal
// errors the stack logged, transactions left after the timers ran out, heap and RSS growth.
// Shared by test/reliability/sip-fuzz.test.ts (bounded) and scripts/soak/sip-fuzz.ts (long form).
import dgram from 'node:dgram';
import net from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { makeSipConfig } from '../../../sip-config';
import { SipStack, SipRequest, ServerTransaction, randomToken } from '../../../sip-server/stack';
import { freePort } from '../../ports';
import { sampleCases } from './generate';

export interface FuzzOptions {
  count: number;
  batch?: number;
  seed?: number;
  /** share of messages sent over TCP (each on its own connection) */
  tcpShare?: number;
  onBatch?: (b: BatchReport) => void;
}

export interface BatchReport {
  sent: number;
  livenessMs: number;
  heapMB: number;
  rssMB: number;
  transactions: number;
}

export interface FuzzReport {
  sent: number;
  batches: number;
  seed: number;
  byMutation: Record<string, number>;
  /** responses received by the fuzzing peer, by status class */
  responses: Record<string, number>;
  /** error-level log lines from the stack (a handler threw) */
  internalErrors: string[];
  /** liveness probes that got no 200 in time */
  livenessFailures: number;
  maxLivenessMs: number;
  transactionsAtEnd: { server: number; client: number };
  heapStartMB: number;
  heapEndMB: number;
  rssStartMB: number;
  rssEndMB: number;
  requestsSeenByTu: number;
  ms: number;
}

const mb = (n: number): number => Math.round((n / 1048576) * 10) / 10;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function gcHeap(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

export async function startFuzzTarget(): Promise<{ stack: SipStack; errors: string[]; seen: { n: number } }> {
  const port = await freePort();
  const errors: string[] = [];
  const sink = new Writable({
    write(chunk, _e, cb) {
      errors.push(String(chunk).slice(0, 500));
      cb();
    },
  });
  const config = makeSipConfig({
    listen: { host: '127.0.0.1', port, transports: ['udp', 'tcp'] },
    timers: { t1: 50, t2: 400, t4: 500 },
    // the fuzzer is one source sending thousands of messages: exempt it from flood bans, which
    // have their own tests, so that every message reaches the parser and the transaction layer
    security: { allowlist: ['127.0.0.1'] },
  });
  const stack = new SipStack(config, { logger: pino({ level: 'error' }, sink) });
  const seen = { n: 0 };
  // A plain UAS: 200 to everything (INVITE gets 180 then 200 with SDP), as a TU would.
  stack.on('request', (req: SipRequest, srv: ServerTransaction) => {
    seen.n++;
    const tag = randomToken();
    if (req.method === 'INVITE') srv.respond(req.makeResponse(180, undefined, { toTag: tag }));
    srv.respond(req.makeResponse(200, undefined, { toTag: tag }));
  });
  await stack.start();
  return { stack, errors, seen };
}

function options(stackPort: number, peerPort: number): Buffer {
  const n = randomToken();
  return Buffer.from(
    [
      `OPTIONS sip:ping@127.0.0.1:${stackPort} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${peerPort};branch=z9hG4bK-live-${n};rport`,
      'Max-Forwards: 70',
      `From: <sip:probe@127.0.0.1>;tag=${n}`,
      `To: <sip:ping@127.0.0.1:${stackPort}>`,
      `Call-ID: live-${n}`,
      'CSeq: 1 OPTIONS',
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n'),
  );
}

/** A valid OPTIONS from a fresh socket: ms until its 200, or -1 after 3 s. */
export async function liveness(stackPort: number): Promise<number> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  const t0 = Date.now();
  try {
    return await new Promise<number>((resolve) => {
      const timer = setTimeout(() => resolve(-1), 3000);
      s.on('message', (d) => {
        if (d.toString().startsWith('SIP/2.0 200')) {
          clearTimeout(timer);
          resolve(Date.now() - t0);
        }
      });
      s.send(options(stackPort, s.address().port), stackPort, '127.0.0.1');
    });
  } finally {
    s.close();
  }
}

function sendTcp(port: number, data: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1');
    const done = (): void => {
      clearTimeout(t);
      c.destroy();
      resolve();
    };
    const t = setTimeout(done, 300);
    c.on('error', done);
    c.on('connect', () => c.end(data));
    c.on('close', done);
  });
}

export async function runSipFuzz(opts: FuzzOptions): Promise<FuzzReport> {
  const batch = opts.batch ?? 500;
  const seed = opts.seed ?? Date.now() & 0x7fffffff;
  const tcpShare = opts.tcpShare ?? 0.1;
  const t0 = Date.now();
  const { stack, errors, seen } = await startFuzzTarget();
  const port = stack.listening[0].port;
  const peer = dgram.createSocket('udp4');
  await new Promise<void>((r) => peer.bind(0, '127.0.0.1', () => r()));
  const responses: Record<string, number> = {};
  peer.on('message', (d) => {
    const m = /^SIP\/2.0 (\d)/.exec(d.toString('latin1', 0, 12));
    const k = m ? `${m[1]}xx` : 'other';
    responses[k] = (responses[k] ?? 0) + 1;
  });
  const byMutation: Record<string, number> = {};
  const heapStart = gcHeap();
  const rssStart = process.memoryUsage().rss;
  let sent = 0,
    batches = 0,
    livenessFailures = 0,
    maxLivenessMs = 0;
  try {
    for (let i = 0; sent < opts.count; i++) {
      const n = Math.min(batch, opts.count - sent);
      const cases = sampleCases({ host: '127.0.0.1', port: peer.address().port, stackPort: port }, n, seed + i);
      const tcp: Promise<void>[] = [];
      for (const [k, c] of cases.entries()) {
        byMutation[c.mutation] = (byMutation[c.mutation] ?? 0) + 1;
        if ((k * 7919) % 100 < tcpShare * 100) tcp.push(sendTcp(port, c.data));
        else if (c.data.length <= 65_000) await new Promise<void>((r) => peer.send(c.data, port, '127.0.0.1', () => r()));
        // pace: a burst of 50 then yield, so the stack works at its own speed, not ours
        if (k % 50 === 49) await sleep(2);
      }
      await Promise.all(tcp);
      sent += n;
      batches++;
      const ms = await liveness(port);
      if (ms < 0) livenessFailures++;
      maxLivenessMs = Math.max(maxLivenessMs, ms);
      const counts = stack.transactionCounts;
      opts.onBatch?.({ sent, livenessMs: ms, heapMB: mb(process.memoryUsage().heapUsed), rssMB: mb(process.memoryUsage().rss), transactions: counts.server + counts.client });
    }
    // every transaction must end by its timers (64*T1 = 3.2 s with these timers, Timer L/H included)
    const end = Date.now() + 8000;
    while (stack.transactionCounts.server + stack.transactionCounts.client > 0 && Date.now() < end) await sleep(100);
    return {
      sent,
      batches,
      seed,
      byMutation,
      responses,
      internalErrors: errors,
      livenessFailures,
      maxLivenessMs,
      transactionsAtEnd: stack.transactionCounts,
      heapStartMB: mb(heapStart),
      heapEndMB: mb(gcHeap()),
      rssStartMB: mb(rssStart),
      rssEndMB: mb(process.memoryUsage().rss),
      requestsSeenByTu: seen.n,
      ms: Date.now() - t0,
    };
  } finally {
    peer.close();
    await stack.stop();
  }
}
