/**
 * What the end-to-end script measures with: the share of a tone in audio (Goertzel over the samples),
 * the audio a phone has heard so far (its WAV dump, still being written), a WAV the switch wrote, and a
 * WebSocket server that keeps the binary frames an audio fork sends it.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { toneShare } from '../../testkit/media-engine/far-end';

/**
 * 16-bit samples of a WAV file that may still be growing (its header's sizes not written yet): what
 * follows the `data` chunk's header, to the end of the file as it is now.
 */
export function growingWavSamples(file: string): Int16Array {
  if (!fs.existsSync(file)) return new Int16Array(0);
  const buf = fs.readFileSync(file);
  const at = buf.indexOf('data', 12, 'latin1');
  if (at < 0) return new Int16Array(0);
  const body = buf.subarray(at + 8);
  const even = body.length - (body.length % 2);
  const out = new Int16Array(even / 2);
  for (let i = 0; i < out.length; i++) out[i] = body.readInt16LE(i * 2);
  return out;
}

/** The share of `hz` in the loudest second of `samples` (0 when silent): a tone the listener heard. */
export function heardShare(samples: Int16Array, hz: number, rate = 8000): number {
  let best = 0;
  let bestEnergy = 0;
  for (let start = 0; start + rate <= samples.length; start += rate / 4) {
    const w = samples.subarray(start, start + rate);
    let e = 0;
    for (const s of w) e += s * s;
    if (e > bestEnergy) {
      bestEnergy = e;
      best = toneShare(w, hz, rate);
    }
  }
  return best;
}

/** Mean |sample|: how much sound there is. */
export function level(samples: Int16Array): number {
  let sum = 0;
  for (const s of samples) sum += Math.abs(s);
  return samples.length ? sum / samples.length : 0;
}

/** A WebSocket server on loopback that keeps what an audio fork sends: the text frames and the PCM. */
export class ForkSink {
  readonly texts: string[] = [];
  private pcm: Buffer[] = [];
  /** bytes of PCM received so far */
  private bytes = 0;
  /** who waits for `samples >= n` (`untilSamples`), checked on each binary frame */
  private waiters: { n: number; resolve: () => void }[] = [];
  connections = 0;
  private constructor(
    private readonly http: http.Server,
    private readonly wss: WebSocketServer,
    readonly url: string,
  ) {}

  static async start(): Promise<ForkSink> {
    const server = http.createServer();
    server.on('error', () => undefined);
    const wss = new WebSocketServer({ server, handleProtocols: (p) => (p.has('audio.drachtio.org') ? 'audio.drachtio.org' : false) });
    wss.on('error', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const sink = new ForkSink(server, wss, `ws://127.0.0.1:${(server.address() as AddressInfo).port}/fork`);
    wss.on('connection', (ws: WebSocket) => {
      sink.connections++;
      ws.on('error', () => undefined);
      ws.on('message', (data: Buffer, binary: boolean) => (binary ? sink.received(Buffer.from(data)) : sink.texts.push(data.toString())));
    });
    return sink;
  }

  private received(b: Buffer): void {
    this.pcm.push(b);
    this.bytes += b.length;
    const have = Math.floor(this.bytes / 2);
    const now = this.waiters.filter((w) => have >= w.n);
    this.waiters = this.waiters.filter((w) => have < w.n);
    for (const w of now) w.resolve();
  }

  /** Resolves with the samples received once there are at least `n` (now or as frames come); rejects after `timeoutMs`. */
  untilSamples(n: number, timeoutMs: number): Promise<Int16Array> {
    if (this.bytes / 2 >= n) return Promise.resolve(this.samples());
    return new Promise((resolve, reject) => {
      const w = {
        n,
        resolve: () => {
          clearTimeout(timer);
          resolve(this.samples());
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${n} samples at the WebSocket server (${Math.floor(this.bytes / 2)} came)`));
      }, timeoutMs);
      this.waiters.push(w);
    });
  }

  /** The 16-bit little-endian samples received so far. */
  samples(): Int16Array {
    const all = Buffer.concat(this.pcm);
    const out = new Int16Array(Math.floor(all.length / 2));
    for (let i = 0; i < out.length; i++) out[i] = all.readInt16LE(i * 2);
    return out;
  }

  async close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }
}
