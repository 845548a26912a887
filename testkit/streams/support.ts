// What the media stream tests share: a loopback platform (sip-server + media-app node + control-api
// with the media-streams attachment) on one Redis prefix, an RTP peer that talks (a PCMU tone) and
// measures what it hears, calls placed by sipp into a number whose flow we choose, and WebSocket
// helpers that read an upgrade refusal's envelope.
import dgram from 'node:dgram';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { attachment } from '../../control-api/media-streams/attachment';
import { closeCommandBus } from '../../control-api/calls/bus';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../api';
import { testDb, truncateAll } from '../db';
import { killAllSipp, sipp, sippCalls, startPlatform, uacWaitsForBye, until, type Platform, type SippResult } from '../media-app/harness';
import type { CallSession } from '../../media-app/call/session';
import { loopbackTrunk } from '../trunks';
import { ArrivalWaits } from '../arrival-waits';

export interface Stack {
  platform: Platform;
  api: TestApp;
  base: string;
  close(): Promise<void>;
}

/** `env`: more media-app settings (a benchmark's wider RTP_PORT_MIN/MAX); `mediaServer`: the node's media backend (startPlatform's). */
export async function startStack(env: Record<string, string> = {}, opts: { mediaServer?: 'embedded' | 'fsmrf' } = {}): Promise<Stack> {
  const prefix = `tst${process.pid}_${randomBytes(4).toString('hex')}:`;
  // the customers' WebSocket servers (external media) and SIP parties listen on loopback: opted in
  const platform = await startPlatform({ REDIS_KEY_PREFIX: prefix, SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256', EGRESS_ALLOW_CIDRS: '127.0.0.0/8', ...env }, opts);
  // one platform, one DATA_DIR: the API serves the recordings the node writes
  const api = await buildTestApp({ env: { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: prefix, DATA_DIR: platform.config.dataDir } });
  const server = http.createServer(api.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const att = await attachment.start(server, api.ctx);
  const port = (server.address() as AddressInfo).port;
  return {
    platform,
    api,
    base: `ws://127.0.0.1:${port}`,
    async close() {
      await att.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await closeCommandBus(api.ctx);
      await api.close();
      await platform.close();
    },
  };
}

// ---- G.711 µ-law, for the peer's RTP ----

const MULAW_DECODE = (() => {
  const t = new Int16Array(256);
  for (let i = 0; i < 256; i++) {
    const u = ~i & 0xff;
    const e = (u >> 4) & 7;
    const s = ((((u & 0x0f) << 3) + 0x84) << e) - 0x84;
    t[i] = u & 0x80 ? -s : s;
  }
  return t;
})();

function mulaw(sample: number): number {
  const sign = sample < 0 ? 0x80 : 0;
  const x = Math.min(Math.abs(sample), 32635) + 0x84;
  let e = 7;
  for (let mask = 0x4000; (x & mask) === 0 && e > 0; mask >>= 1) e--;
  const m = (x >> (e + 3)) & 0x0f;
  return ~(sign | (e << 4) | m) & 0xff;
}

/** 160 samples of a tone, continuing phase from `n`. */
export function tone(n: number, hz = 700, amp = 8000): Int16Array {
  const f = new Int16Array(160);
  for (let i = 0; i < 160; i++) f[i] = Math.round(amp * Math.sin((2 * Math.PI * hz * (n * 160 + i)) / 8000));
  return f;
}

export function pcmBuffer(samples: Int16Array): Buffer {
  const b = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) b.writeInt16LE(samples[i]!, i * 2);
  return b;
}

/** Mean |sample| of little-endian 16-bit PCM. */
export function level(pcm: Buffer): number {
  let sum = 0;
  const n = pcm.length >> 1;
  for (let i = 0; i < n; i++) sum += Math.abs(pcm.readInt16LE(i * 2));
  return n ? sum / n : 0;
}

/** One frame of the peers' 700 Hz tone in µ-law (the same every frame: 14 periods in 160 samples). */
const TONE_PAYLOAD = Buffer.from(Array.from(tone(0), (x) => mulaw(x)));
const tonePayloads = new Map<number, Buffer>();
/** The 700 Hz frame's PCMU payload at amplitude `amp` (made once per amplitude). */
const toneAt = (amp: number): Buffer => {
  let p = tonePayloads.get(amp);
  if (!p) tonePayloads.set(amp, (p = Buffer.from(Array.from(tone(0, 700, amp), (x) => mulaw(x)))));
  return p;
};

/** The far end of a call's media: talks a tone toward the platform and measures what comes back. */
export class RtpPeer {
  private sock = dgram.createSocket('udp4');
  port = 0;
  levels: number[] = [];
  /** Arrival time (ms, high resolution) of each packet heard. */
  arrivals: number[] = [];
  private timer: NodeJS.Timeout | null = null;
  private seq = 0;
  /** The tone's amplitude while talking (0: RTP of silence, as a phone with nothing to say sends). */
  amplitude = 8000;
  private readonly ssrc = randomBytes(4).readUInt32BE(0);
  /** waits on what is heard: checked at each packet, rejected by close() */
  private readonly waits = new ArrivalWaits();

  static async open(): Promise<RtpPeer> {
    const p = new RtpPeer();
    await new Promise<void>((r) => p.sock.bind(0, '127.0.0.1', r));
    p.port = p.sock.address().port;
    p.sock.on('message', (buf) => {
      if (buf.length < 12 || (buf[0]! & 0xc0) !== 0x80 || (buf[1]! & 0x7f) !== 0) return;
      p.arrivals.push(performance.now());
      const payload = buf.subarray(12 + (buf[0]! & 0x0f) * 4);
      let sum = 0;
      for (const b of payload) sum += Math.abs(MULAW_DECODE[b]!);
      p.levels.push(payload.length ? sum / payload.length : 0);
      p.waits.check();
    });
    return p;
  }

  /** Packets heard with speech-like energy. */
  voiced(from = 0): number {
    return this.levels.slice(from).filter((l) => l > 300).length;
  }

  /**
   * Resolves once what this peer hears has turned voiced (`on`: 8 of the last 10 packets) or quiet (none
   * of the last 10): the moment a change of the mix (a join, a mute) reaches it.
   */
  turned(on: boolean, timeoutMs = 5000): Promise<void> {
    const recent = () => (this.levels.length < 10 ? -1 : this.levels.slice(-10).filter((l) => l > 300).length);
    return this.waits.until(on ? () => recent() >= 8 : () => recent() === 0, timeoutMs, `heard ${on ? 'voiced' : 'quiet'}`);
  }

  /** Resolves once `n` packets have come since index `from` (100: 2 s): a measured window bounded by the media, not the wall clock. */
  packetsFrom(from: number, n = 100): Promise<void> {
    return this.waits.until(() => this.levels.length - from >= n, n * 20 * 3 + 2000, `${n} packets heard`);
  }

  /** turned(on), then the next `n` packets: resolves with that window's first index, for voiced(from). */
  async windowAfter(on: boolean, n = 100): Promise<number> {
    await this.turned(on);
    const from = this.levels.length;
    await this.packetsFrom(from, n);
    return from;
  }

  /**
   * Sends a PCMU tone to the platform's RTP port every 20 ms. The 700 Hz tone is 14 whole periods a
   * frame, so every frame's payload is the same: encoded once (a benchmark's hundreds of peers share
   * the process with the platform).
   */
  talk(toPort: number): void {
    this.timer = setInterval(() => {
      const b = Buffer.allocUnsafe(12 + 160);
      b[0] = 0x80;
      b[1] = 0;
      b.writeUInt16BE(this.seq & 0xffff, 2);
      b.writeUInt32BE((this.seq * 160) >>> 0, 4);
      b.writeUInt32BE(this.ssrc, 8);
      (this.amplitude === 8000 ? TONE_PAYLOAD : toneAt(this.amplitude)).copy(b, 12);
      this.seq++;
      this.sock.send(b, toPort, '127.0.0.1');
    }, 20);
  }

  /**
   * Sends one digit as RFC 4733 telephone-events (payload type 101, as uacWaitsForBye offers), on the
   * talking stream's SSRC and sequence: an event packet every 20 ms for `ms`, then the end packet three times.
   */
  async digit(d: string, toPort: number, ms = 120): Promise<void> {
    const event = '0123456789*#ABCD'.indexOf(d);
    if (event < 0) throw new Error(`not a DTMF digit: ${d}`);
    const ts = (this.seq * 160) >>> 0;
    const packet = (duration: number, end: boolean, marker: boolean) => {
      const b = Buffer.alloc(16);
      b[0] = 0x80;
      b[1] = (marker ? 0x80 : 0) | 101;
      b.writeUInt16BE(this.seq++ & 0xffff, 2);
      b.writeUInt32BE(ts, 4);
      b.writeUInt32BE(this.ssrc, 8);
      b[12] = event;
      b[13] = (end ? 0x80 : 0) | 10;
      b.writeUInt16BE(duration, 14);
      this.sock.send(b, toPort, '127.0.0.1');
    };
    for (let t = 20; t <= ms; t += 20) {
      packet(t * 8, false, t === 20);
      await new Promise((r) => setTimeout(r, 20));
    }
    for (let i = 0; i < 3; i++) packet(ms * 8, true, false);
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.waits.failAll(new Error('the peer closed'));
    this.sock.close();
  }
}

// ---- calls ----

export interface Customer {
  fixture: Fixture;
  /** A number per flow, made on demand. */
  seq: number;
}

export async function customerWithTrunk(api: TestApp): Promise<Fixture> {
  const f = await createFixture(api.ctx);
  await loopbackTrunk(await testDb(), f.customer.id, `st${randomBytes(4).toString('hex')}`);
  return f;
}

let numberSeq = 0;

export interface PlacedCall {
  callId: string;
  peer: RtpPeer;
  sipp: Promise<SippResult>;
  /** the live call on the node */
  live: CallSession;
}

/**
 * sipp (as the customer's trunk) calls a new number whose flow is `actions`; resolves once the call is
 * progressing, rejects at once with sipp's errors when sipp ends first. With `live: false` it resolves as
 * soon as the Call row exists (for flows that end at once; `live` is then unset). `killAfterMs`: sipp's
 * own limit on the call (60 s unless told; when told, sipp's scenario timeout and its wait for the
 * platform's BYE follow it, for the long calls of a benchmark). `steps`: sipp scenario steps after the
 * ACK (before the wait for the BYE), given the peer's RTP port.
 */
export async function placeCall(
  stack: Stack,
  customerId: string,
  actions: unknown[],
  opts: { talk?: boolean; live?: boolean; killAfterMs?: number; steps?: (rtpPort: number) => string } = {},
): Promise<PlacedCall> {
  const db = await testDb();
  const flow = await flowsRepo(db).create({ customer_id: customerId, actions: parseActions(actions as never) } as never);
  const number = `+8997${String(process.pid % 1000).padStart(3, '0')}${String(++numberSeq).padStart(5, '0')}`;
  await numbersRepo(db).create({ customer_id: customerId, number, type: 'virtual', call_flow_id: flow.id });
  const peer = await RtpPeer.open();
  const sipPort = stack.platform.sipPort;
  const long = opts.killAfterMs === undefined ? {} : { byeTimeoutMs: opts.killAfterMs };
  const args = [`127.0.0.1:${sipPort}`, '-i', '127.0.0.1', '-m', '1', ...(opts.killAfterMs === undefined ? [] : ['-timeout', `${Math.ceil(opts.killAfterMs / 1000)}s`])];
  // the live call of this number, as the node takes it (no polling of the database per call)
  let taken: CallSession | null = null;
  // the moment it progressed with an endpoint, seen on its status event: a short flow (a busy <Dial>, then a
  // hang-up) can progress and end between two polls of a loaded machine, and a poll alone would never see it
  let progressed: { call: CallSession; rtpPort: number } | null = null;
  const stopWatching = stack.platform.app.calls.onAdded((c) => {
    const call = c as CallSession;
    if (call.row.destination.target !== number) return;
    taken = call;
    call.on('status', (to) => {
      if (to === 'progressing' && call.endpoint) progressed ??= { call, rtpPort: call.endpoint.local.port };
    });
  });
  const run = sipp(uacWaitsForBye(`${number}@127.0.0.1:${sipPort}`, '+15551230000', peer.port, { ...long, ...(opts.steps ? { steps: opts.steps(peer.port) } : {}) }), args, {
    killAfterMs: opts.killAfterMs ?? 60_000,
  });
  let exited: SippResult | null = null;
  void run.done.then((r) => (exited = r));
  const sippEnded = (what: string) => {
    const r = exited as SippResult | null;
    if (r && !taken) throw new Error(`sipp ended (exit ${r.code}) before ${what}: ${(r.errors || r.stderr).trim().slice(0, 400)}`);
  };
  try {
    if (opts.live === false) {
      const row = await until(
        async () => {
          sippEnded('the call was taken');
          return (await db('calls').where({ customer_id: customerId }).whereRaw(`destination->>'target' = ?`, [number]).first()) ?? null;
        },
        30_000,
        'the call row',
      );
      return { callId: row.id, peer, sipp: run.done, live: undefined as unknown as CallSession };
    }
    const live = await until(
      () => {
        sippEnded('the call progressed');
        const c = taken as CallSession | null;
        const seen = progressed as { call: CallSession; rtpPort: number } | null;
        return seen ?? (c && c.status === 'progressing' && c.endpoint ? { call: c, rtpPort: c.endpoint.local.port } : null);
      },
      30_000,
      'call progressing with an endpoint',
    );
    if (opts.talk !== false) peer.talk(live.rtpPort);
    return { callId: live.call.id, peer, sipp: run.done, live: live.call };
  } catch (e) {
    peer.close();
    throw e;
  } finally {
    stopWatching();
  }
}

/**
 * `n` calls at once, placed by ONE sipp (harness `sippCalls`: a sipp per call would take the machine's
 * cores from the platform), each to its own number whose flow is `actions`, offering its own RTP peer;
 * resolves once every call is progressing on the node, its peer talking, and rejects naming how many
 * did not (or with sipp's errors when it ends first). Every call's `sipp` is that one sipp's result.
 */
export async function placeCalls(stack: Stack, customerId: string, actions: unknown[], n: number, opts: { killAfterMs: number; waitMs?: number }): Promise<PlacedCall[]> {
  const db = await testDb();
  const flow = await flowsRepo(db).create({ customer_id: customerId, actions: parseActions(actions as never) } as never);
  const numbers = Array.from({ length: n }, () => `+8997${String(process.pid % 1000).padStart(3, '0')}${String(++numberSeq).padStart(5, '0')}`);
  for (const number of numbers) await numbersRepo(db).create({ customer_id: customerId, number, type: 'virtual', call_flow_id: flow.id });
  const peers = await Promise.all(numbers.map(() => RtpPeer.open()));
  const wanted = new Set(numbers);
  const taken = new Map<string, CallSession>();
  const stopWatching = stack.platform.app.calls.onAdded((c) => {
    const target = (c as CallSession).row.destination.target;
    if (wanted.has(target)) taken.set(target, c as CallSession);
  });
  const sipPort = stack.platform.sipPort;
  const scenario = uacWaitsForBye(`[field0]@127.0.0.1:${sipPort}`, '+15551230000', '[field1]', { byeTimeoutMs: opts.killAfterMs });
  const run = sippCalls(
    scenario,
    `127.0.0.1:${sipPort}`,
    numbers.map((number, i) => [number, peers[i]!.port]),
    { timeoutMs: opts.killAfterMs },
  );
  let exited: SippResult | null = null;
  void run.done.then((r) => (exited = r));
  const progressing = () => numbers.map((number) => taken.get(number)).filter((c): c is CallSession => !!c && c.status === 'progressing' && !!c.endpoint);
  try {
    const end = Date.now() + (opts.waitMs ?? 30_000);
    while (progressing().length < n) {
      const r = exited as SippResult | null;
      if (r) throw new Error(`sipp ended (exit ${r.code}) with ${progressing().length} of ${n} calls progressing: ${(r.errors || r.stderr).trim().slice(0, 400)}`);
      if (Date.now() > end) throw new Error(`${progressing().length} of ${n} calls progressing (${taken.size} taken) after ${opts.waitMs ?? 30_000} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return numbers.map((number, i) => {
      const live = taken.get(number)!;
      peers[i]!.talk(live.endpoint!.local.port);
      return { callId: live.id, peer: peers[i]!, sipp: run.done, live };
    });
  } catch (e) {
    for (const p of peers) p.close();
    throw e;
  } finally {
    stopWatching();
  }
}

// ---- WebSocket helpers ----

export interface Refusal {
  status: number;
  body: { error?: { status?: string; reason?: string; message?: string; request_id?: string } };
}

/** Opens a WebSocket; resolves with the socket, or with the HTTP refusal of the upgrade. */
export function openWs(url: string, headers: Record<string, string> = {}): Promise<{ ws: WebSocket } | { refusal: Refusal }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => {
        let body = {};
        try {
          body = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        resolve({ refusal: { status: res.statusCode ?? 0, body } });
      });
    });
    ws.once('error', (e) => reject(e));
  });
}

export async function refusalOf(url: string, headers: Record<string, string> = {}): Promise<Refusal> {
  const r = await openWs(url, headers);
  if ('ws' in r) {
    r.ws.terminate();
    throw new Error(`expected the upgrade to be refused: ${url}`);
  }
  return r.refusal;
}

export async function accept(url: string): Promise<WebSocket> {
  const r = await openWs(url);
  if ('refusal' in r) throw new Error(`upgrade refused: ${r.refusal.status} ${JSON.stringify(r.refusal.body)}`);
  return r.ws;
}

/** Resolves with the close code and reason. */
export function closed(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((r) => ws.once('close', (code, reason) => r({ code, reason: reason.toString() })));
}

/**
 * Mocha hooks of the stream suites: on an emptied database, a stack and a customer with a trunk (the
 * owner of the calls), handed to `set` once up; every sipp killed and the stack closed after.
 */
export function useStreamStack(set: (s: { stack: Stack; owner: Fixture }) => void, opts: { mediaServer?: 'embedded' | 'fsmrf' } = {}): void {
  let stack: Stack | undefined;
  before(async () => {
    await truncateAll();
    stack = await startStack({}, opts);
    set({ stack, owner: await customerWithTrunk(stack.api) });
  });
  after(async () => {
    killAllSipp();
    await stack?.close();
  });
}
