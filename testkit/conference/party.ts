// A conference participant's audio on loopback: one UDP socket that sends a steady PCMU tone of its
// own frequency to the platform (latched from the first packet the platform sends) and keeps what it
// hears, so a test can tell which tones (parties) reach it.
import dgram from 'node:dgram';
import { decodeG711, encodeG711 } from '../../core/audio/g711';
import { ArrivalWaits } from '../arrival-waits';
import { goertzelCoeff, goertzelPower, relativePower } from '../../media-engine/dsp/goertzel';

const FRAME = 160;
/** Frames one pacing tick may send to catch up after a stall (200 ms). */
const MAX_BURST = 10;

export interface Heard {
  at: number;
  pcm: Int16Array;
}

export class RtpParty {
  private sock = dgram.createSocket('udp4');
  port = 0;
  private remote: { address: string; port: number } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private phase = 0;
  private seq = Math.floor(Math.random() * 1000);
  private ts = Math.floor(Math.random() * 100000);
  private readonly ssrc = Math.floor(Math.random() * 0xffffffff);
  readonly heard: Heard[] = [];
  private key: { freqs: number[]; frames: number } | null = null;
  private keyPhase = 0;
  /** The pending heardUntil waits: each checked at every frame heard, rejected by close(). */
  private readonly waits = new ArrivalWaits();

  private constructor(
    readonly freq: number,
    private readonly amplitude: number,
  ) {}

  static async open(freq: number, amplitude = 5000): Promise<RtpParty> {
    const p = new RtpParty(freq, amplitude);
    await new Promise<void>((r) => p.sock.bind(0, '127.0.0.1', r));
    p.port = p.sock.address().port;
    p.sock.on('message', (buf, rinfo) => {
      if (buf.length < 12 || (buf[0]! & 0xc0) !== 0x80 || (buf[1]! & 0x7f) !== 0) return;
      if (!p.remote) {
        p.remote = { address: rinfo.address, port: rinfo.port };
        p.startPacing();
      }
      const cc = buf[0]! & 0x0f;
      p.heard.push({ at: Date.now(), pcm: decodeG711('PCMU', buf.subarray(12 + cc * 4)) });
      p.waits.check();
    });
    return p;
  }

  /**
   * Sends by the wall clock, as a phone's sound card does: each tick sends every frame due since the
   * start (at most MAX_BURST at once), so a test process slowed by a busy machine (the suite runs in
   * parallel shards on two cores) still sends 50 frames a second instead of leaving gaps the far side
   * hears as silence.
   */
  private startPacing(): void {
    if (this.timer) return;
    const start = Date.now();
    let sent = 0;
    this.timer = setInterval(() => {
      const due = Math.floor((Date.now() - start) / 20) + 1;
      if (due - sent > MAX_BURST) sent = due - MAX_BURST;
      while (sent < due) {
        this.send();
        sent++;
      }
    }, 20);
  }

  private send(): void {
    if (!this.remote) return;
    const pcm = new Int16Array(FRAME);
    const step = (2 * Math.PI * this.freq) / 8000;
    if (this.key && this.key.frames-- > 0) {
      // an in-band DTMF key (its two tones) in place of the party's own tone
      const [lo, hi] = this.key.freqs.map((f) => (2 * Math.PI * f) / 8000);
      for (let i = 0; i < FRAME; i++, this.keyPhase++) pcm[i] = Math.round(6000 * (Math.sin(lo! * this.keyPhase) + Math.sin(hi! * this.keyPhase)));
    } else {
      if (this.key) this.key = null;
      for (let i = 0; i < FRAME; i++) pcm[i] = Math.round(this.amplitude * Math.sin((this.phase += step)));
    }
    this.phase %= 2 * Math.PI;
    const pkt = Buffer.alloc(12 + FRAME);
    pkt[0] = 0x80;
    pkt[1] = 0;
    pkt.writeUInt16BE((this.seq = (this.seq + 1) & 0xffff), 2);
    pkt.writeUInt32BE((this.ts = (this.ts + FRAME) >>> 0), 4);
    pkt.writeUInt32BE(this.ssrc >>> 0, 8);
    encodeG711('PCMU', pcm, pkt.subarray(12));
    this.sock.send(pkt, this.remote.port, this.remote.address, () => undefined);
  }

  /** Sends the DTMF key `digit` in-band for `ms` (its two tones instead of the party's own). */
  pressKey(digit: string, ms = 200): void {
    const rows = [697, 770, 852, 941];
    const cols = [1209, 1336, 1477, 1633];
    const i = '123A456B789C*0#D'.indexOf(digit);
    if (i < 0 || digit.length !== 1) throw new Error(`not a DTMF key: ${digit}`);
    this.keyPhase = 0;
    this.key = { freqs: [rows[Math.floor(i / 4)]!, cols[i % 4]!], frames: Math.round(ms / 20) };
  }

  /** Starts sending to `remote` without waiting for a first packet from it. */
  sendTo(remote: { address: string; port: number }): void {
    this.remote = remote;
    this.startPacing();
  }

  /** Stops sending (the party goes quiet but keeps listening). */
  quiet(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  close(): void {
    this.quiet();
    this.waits.failAll(new Error(`party ${this.freq} closed`));
    this.sock.close();
  }

  /**
   * Resolves once `test` holds of what has been heard, checked as each frame arrives (and at once);
   * rejects naming `what` when it has not held within `timeoutMs` or the party closes. The timer is the
   * wait's own: cleared when it settles.
   */
  heardUntil(test: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return this.waits.until(test, timeoutMs, `party ${this.freq}: ${what}`);
  }

  /** Share of the last `n` frames heard that carry `freq` (0 before `n` frames have come). */
  recentPresence(freq: number, n: number): number {
    if (this.heard.length < n) return 0;
    return this.heard.slice(-n).filter((h) => toneIn(h.pcm, 0, h.pcm.length, freq)).length / n;
  }

  /**
   * Resolves once `freq` is heard (`on`: 8 of the last 10 frames carry it) or no longer heard (none of
   * the last 10 does): the moment a change of the mix (a join, a mute, a kick) reaches this party.
   */
  toneTurns(freq: number, on: boolean, timeoutMs = 5000): Promise<void> {
    const n = 10;
    const test = on ? () => this.recentPresence(freq, n) >= 0.8 : () => this.heard.length >= n && this.recentPresence(freq, n) === 0;
    return this.heardUntil(test, timeoutMs, `${freq} ${on ? 'heard' : 'gone'}`);
  }

  /** Resolves once `n` frames have been heard since `from` (ms timestamp): a window bounded by the media, not the wall clock. */
  framesHeard(from: number, n: number, timeoutMs = n * 20 * 3 + 2000): Promise<void> {
    return this.heardUntil(() => this.framesBetween(from) >= n, timeoutMs, `${n} frames since ${new Date(from).toISOString()}`);
  }

  /** Fraction of the frames heard in [from, to) (ms timestamps) in which `freq` carries a real share of the audio. */
  presence(freq: number, from: number, to = Date.now()): number {
    const frames = this.heard.filter((h) => h.at >= from && h.at < to);
    if (frames.length === 0) return 0;
    return frames.filter((h) => toneIn(h.pcm, 0, h.pcm.length, freq)).length / frames.length;
  }

  framesBetween(from: number, to = Date.now()): number {
    return this.heard.filter((h) => h.at >= from && h.at < to).length;
  }
}

/** True when `freq` holds at least 10 % of the window's energy and the window is not silence. */
export function toneIn(samples: ArrayLike<number>, start: number, n: number, freq: number): boolean {
  let energy = 0;
  let abs = 0;
  for (let i = start; i < start + n; i++) {
    energy += samples[i]! * samples[i]!;
    abs += Math.abs(samples[i]!);
  }
  if (abs / n < 200) return false;
  return relativePower(goertzelPower(samples, start, n, goertzelCoeff(freq)), n, energy) > 0.1;
}
