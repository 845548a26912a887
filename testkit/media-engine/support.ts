import dgram from 'node:dgram';
import type { EgressSettings } from '../../core/net';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MediaServer, type Endpoint, type MediaServerOptions } from '../../media-engine';
import { portBlock, sippMediaPort } from '../ports';

export function tmpDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'me-test-'));
}

/** A random RTP port window in this test process's share; the pool skips ports other processes hold. */
export function portRange(size = 200): { min: number; max: number } {
  return portBlock('engineRtp', size, 2);
}

/** Speech made now with espeak-ng, converted by sox to 8 kHz 16-bit mono WAV. */
export function speechWav(file: string, text: string): void {
  const raw = file + '.espeak.wav';
  execFileSync('espeak-ng', ['-w', raw, text]);
  execFileSync('sox', [raw, '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', file]);
  fs.rmSync(raw);
}

export function readWav(file: string): { rate: number; channels: number; bits: number; samples: Int16Array; dataBytes: number; fileBytes: number } {
  const b = fs.readFileSync(file);
  if (b.toString('ascii', 0, 4) !== 'RIFF' || b.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a WAV');
  let off = 12;
  let fmt = { rate: 0, channels: 0, bits: 0 };
  while (off + 8 <= b.length) {
    const id = b.toString('ascii', off, off + 4);
    const size = b.readUInt32LE(off + 4);
    if (id === 'fmt ') fmt = { channels: b.readUInt16LE(off + 10), rate: b.readUInt32LE(off + 12), bits: b.readUInt16LE(off + 22) };
    if (id === 'data') {
      const data = b.subarray(off + 8, off + 8 + size);
      const samples = new Int16Array(data.length >> 1);
      for (let i = 0; i < samples.length; i++) samples[i] = data.readInt16LE(i * 2);
      return { ...fmt, samples, dataBytes: size, fileBytes: b.length };
    }
    off += 8 + size + (size & 1);
  }
  throw new Error('no data chunk');
}

function onset(x: Int16Array, threshold = 500): number {
  for (let i = 0; i + 80 <= x.length; i += 40) {
    let s = 0;
    for (let k = i; k < i + 80; k++) s += Math.abs(x[k]);
    if (s / 80 > threshold) return i;
  }
  return -1;
}

/**
 * Normalised cross-correlation of `got` against `ref`, found near the lag where their energy starts.
 * Computed per half-second chunk of speech (each chunk may slip by a few frames, as real
 * networks and a loaded CI machine make it) and averaged weighted by chunk energy.
 */
export function bestCorrelation(ref: Int16Array, got: Int16Array): { corr: number; lag: number } {
  const o1 = onset(ref);
  const o2 = onset(got);
  if (o1 < 0 || o2 < 0) return { corr: 0, lag: 0 };
  const whole = correlateAt(ref, got, 0, ref.length, o2 - o1 - 400, o2 - o1 + 400);
  let wsum = 0;
  let csum = 0;
  for (let from = 0; from < ref.length; from += 4000) {
    const to = Math.min(ref.length, from + 4000);
    const e = rms(ref, from, to);
    if (e < 300 || to - from < 1000) continue;
    const c = correlateAt(ref, got, from, to, whole.lag - 400, whole.lag + 400);
    wsum += e;
    csum += e * c.corr;
  }
  return { corr: wsum ? csum / wsum : whole.corr, lag: whole.lag };
}

function correlateAt(ref: Int16Array, got: Int16Array, from: number, to: number, lagMin: number, lagMax: number): { corr: number; lag: number } {
  let best = { corr: -1, lag: 0 };
  for (let lag = lagMin; lag <= lagMax; lag++) {
    let xy = 0;
    let xx = 0;
    let yy = 0;
    for (let i = from; i < to; i++) {
      const j = i + lag;
      if (j < 0 || j >= got.length) continue;
      xy += ref[i] * got[j];
      xx += ref[i] * ref[i];
      yy += got[j] * got[j];
    }
    const c = xx && yy ? xy / Math.sqrt(xx * yy) : 0;
    if (c > best.corr) best = { corr: c, lag };
  }
  return best;
}

export function rms(x: Int16Array, from = 0, to = x.length): number {
  let s = 0;
  for (let i = from; i < to; i++) s += x[i] * x[i];
  return Math.sqrt(s / Math.max(1, to - from));
}

/** A far end's SDP offer: PCMU at 20 ms, send and receive, media to host:port; `telephoneEvent`: with RFC 4733 digits (101). */
export function pcmuOffer(port: number, host = '127.0.0.1', telephoneEvent = false): string {
  const te = telephoneEvent ? ['a=rtpmap:101 telephone-event/8000'] : [];
  return [
    'v=0',
    'o=- 1 1 IN IP4 127.0.0.1',
    's=-',
    `c=IN IP4 ${host}`,
    't=0 0',
    `m=audio ${port} RTP/AVP 0${telephoneEvent ? ' 101' : ''}`,
    'a=rtpmap:0 PCMU/8000',
    ...te,
    'a=ptime:20',
    'a=sendrecv',
    '',
  ].join('\r\n');
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** What `peer` hears for `ms` (the measurement's length), recorded into the WAV `file` and read back. */
export async function heardFor(peer: Endpoint, file: string, ms: number): Promise<Int16Array> {
  const rec = await peer.startRecord(file);
  await sleep(ms);
  await peer.stopRecord(file);
  await rec.done;
  return readWav(file).samples;
}

/** The error a promise rejects with (fails the test when it resolves). */
export async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected the promise to reject');
}

export interface MediaFixture {
  ms: MediaServer;
  /** A temporary folder, removed after the suite. */
  dir: string;
  /** `<dir>/speech.wav` when `speech` text was given. */
  speech: string;
}

/**
 * The before/after pair every media-engine suite needs: a temp folder, optional espeak-ng speech,
 * suite-specific files (`prepare`), and a MediaServer on a random port window; all torn down after.
 * `set` hands the fixture to the suite's own variables.
 */
export function useMediaServer(
  opts: { ports: number; workers: number; speech?: string; cache?: boolean; prepare?: (dir: string) => void; egress?: EgressSettings; server?: Partial<MediaServerOptions> },
  set: (f: MediaFixture) => void,
): void {
  let f: MediaFixture | undefined;
  before(async () => {
    const dir = tmpDir();
    const speech = path.join(dir, 'speech.wav');
    if (opts.speech) speechWav(speech, opts.speech);
    opts.prepare?.(dir);
    const ms = await MediaServer.start({ rtpPorts: portRange(opts.ports), workers: opts.workers, egress: opts.egress, ...(opts.cache ? { cacheDir: path.join(dir, 'cache') } : {}), ...opts.server });
    f = { ms, dir, speech };
    set(f);
  });
  after(async () => {
    await f?.ms.destroy();
    if (f) fs.rmSync(f.dir, { recursive: true, force: true });
  });
}

/**
 * For a describe block after useMediaServer: before each test an engine endpoint answering a PCMU offer
 * from a loopback UDP socket that only listens (its far end); both closed after each test. `get()` is
 * the current test's endpoint.
 */
export function usePcmuEndpoint(server: () => MediaServer): { get: () => Endpoint } {
  let sock: dgram.Socket | undefined;
  let ep: Endpoint | undefined;
  beforeEach(async () => {
    sock = dgram.createSocket('udp4');
    sock.on('error', () => undefined);
    await new Promise<void>((r) => sock!.bind(0, '127.0.0.1', r));
    ep = await server().createEndpoint({ remoteSdp: pcmuOffer(sock.address().port) });
  });
  afterEach(async () => {
    await ep?.destroy();
    sock?.close();
    ep = undefined;
    sock = undefined;
  });
  return {
    get: () => {
      if (!ep) throw new Error('usePcmuEndpoint: no endpoint outside a test');
      return ep;
    },
  };
}

/** useMediaServer (10 ports, one worker) with usePcmuEndpoint on it: before each test `set` gets that test's endpoint. */
export function usePcmuLeg(set: (ep: Endpoint) => void): void {
  let ms: MediaServer | undefined;
  useMediaServer({ ports: 10, workers: 1 }, (f) => (ms = f.ms));
  const endpoint = usePcmuEndpoint(() => ms!);
  beforeEach(() => set(endpoint.get()));
}

/** Two engine endpoints of `ms` sending each other PCMU over loopback (`b` made near `a`); `destroy` ends both. */
export async function endpointPair(ms: MediaServer): Promise<{ a: Endpoint; b: Endpoint; destroy(): Promise<void> }> {
  const a = await ms.createEndpoint();
  const b = await ms.createEndpoint({ remoteSdp: a.local.sdp, near: a });
  await a.modify(b.local.sdp);
  return {
    a,
    b,
    async destroy() {
      await a.destroy();
      await b.destroy();
    },
  };
}

/** Both sockets of a freed RTP port can be bound again by somebody else. */
export async function bindable(port: number): Promise<boolean> {
  const socks = [dgram.createSocket('udp4'), dgram.createSocket('udp4')];
  try {
    await Promise.all(
      socks.map(
        (s, i) =>
          new Promise<void>((resolve, reject) => {
            s.once('error', reject);
            s.bind({ port: port + i, address: '127.0.0.1', exclusive: true }, () => resolve());
          }),
      ),
    );
    return true;
  } catch {
    return false;
  } finally {
    for (const s of socks)
      try {
        s.close();
      } catch {
        /* not bound */
      }
  }
}

/** An RTP and an RTCP socket bound on loopback at a free port pair (sippMediaPort and the next). */
export async function bindRtpPair(): Promise<[dgram.Socket, dgram.Socket]> {
  const base = await sippMediaPort();
  const bind = (port: number) =>
    new Promise<dgram.Socket>((resolve, reject) => {
      const s = dgram.createSocket('udp4');
      s.once('error', reject);
      s.bind(port, '127.0.0.1', () => resolve(s));
    });
  return [await bind(base), await bind(base + 1)];
}

/** The errno code `f` throws with ('EINVAL' …), or 'no error'. */
export function errnoOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    return (e as NodeJS.ErrnoException).code;
  }
  return 'no error';
}

/** Frame `n`'s 160 samples: its number in the signs of the first 8, the rest silence (a fork's order and losses, read back by numberOf). */
export function numbered(n: number): Int16Array {
  const f = new Int16Array(160);
  for (let b = 0; b < 8; b++) f[b] = (n >> b) & 1 ? 8000 : -8000;
  return f;
}

/** The number a frame carries (numbered), or -1 for silence (or a frame that carries none). */
export function numberOf(f: Int16Array): number {
  let n = 0;
  for (let b = 0; b < 8; b++) {
    if (Math.abs(f[b]!) < 2000) return -1;
    if (f[b]! > 0) n |= 1 << b;
  }
  return n;
}
