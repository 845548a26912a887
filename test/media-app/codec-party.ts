// A phone's RTP for the codec re-INVITE suites (codec-reinvite-backends.test.ts): it sends a tone of its
// own frequency in the codec it is on (G.711 µ-law or A-law, G.722) and decodes what the platform sends
// by the packet's payload type, counting per type the packets whose audio is the tone it expects to hear
// (Goertzel: most of the frame's energy at that frequency). Like a phone, it moves its own sending to the
// codec it was told (`follow`) once the platform's first packet in that codec arrives.
import dgram from 'node:dgram';
import { createCodec, type Codec } from '../../media-engine/codecs';
import { goertzelCoeff, goertzelPower, relativePower } from '../../media-engine/dsp/goertzel';

export type PartyCodec = 'PCMU' | 'PCMA' | 'G722';

export const PAYLOAD_TYPE: Record<PartyCodec, number> = { PCMU: 0, PCMA: 8, G722: 9 };
const CODEC_OF: Record<number, PartyCodec> = { 0: 'PCMU', 8: 'PCMA', 9: 'G722' };

/** the SSRC every CodecParty sends under: a packet carrying it came from another party, never from the platform */
const PARTY_SSRC = 0x0c0dec01;
/** a frame whose decoded audio has this share of its energy at the expected frequency is that tone */
const TONE_SHARE = 0.6;
/** and a mean |sample| above this (the tone is sent at 8000; G.711 silence decodes to about 8) */
const LEVEL_FLOOR = 1000;

export class CodecParty {
  private readonly sock = dgram.createSocket('udp4');
  private timer: NodeJS.Timeout | null = null;
  private leg: number | null = null;
  private readonly codecs = new Map<PartyCodec, Codec>();
  port = 0;
  /** the codec it sends in now */
  sending: PartyCodec;
  /** the codec it moves to at the platform's first packet in it (after a re-INVITE) */
  private next: PartyCodec | null = null;
  /** per payload type received: packets, and those whose audio is the expected tone */
  readonly packets: Record<number, number> = {};
  readonly tones: Record<number, number> = {};

  private constructor(
    readonly sendHz: number,
    readonly hearHz: number,
    first: PartyCodec,
  ) {
    this.sending = first;
  }

  /** A party sending `sendHz` in `first`, listening for `hearHz`. */
  static async open(o: { sendHz: number; hearHz: number; codec: PartyCodec }): Promise<CodecParty> {
    const p = new CodecParty(o.sendHz, o.hearHz, o.codec);
    p.sock.on('error', () => undefined); // a send to a leg gone (ICMP) is not this party's failure
    await new Promise<void>((r) => p.sock.bind(0, '127.0.0.1', r));
    p.port = p.sock.address().port;
    p.sock.on('message', (buf, rinfo) => p.received(buf, rinfo.port));
    return p;
  }

  /** After its re-INVITE offering `codec`: it sends in it from the platform's first packet in it on. */
  follow(codec: PartyCodec): void {
    this.next = codec;
  }

  /** Packets of `codec` received whose audio is the expected tone. */
  heard(codec: PartyCodec): number {
    return this.tones[PAYLOAD_TYPE[codec]] ?? 0;
  }

  /** All packets of the expected tone, whatever the codec. */
  get heardAll(): number {
    return Object.values(this.tones).reduce((a, n) => a + n, 0);
  }

  private codec(name: PartyCodec): Codec {
    let c = this.codecs.get(name);
    if (!c) this.codecs.set(name, (c = createCodec(name)));
    return c;
  }

  private received(buf: Buffer, port: number): void {
    if (buf.length < 12 || (buf[0]! & 0xc0) !== 0x80) return;
    if (this.leg === null) {
      if (buf.readUInt32BE(8) === PARTY_SSRC) return;
      this.talkTo(port);
    }
    if (port !== this.leg) return;
    const pt = buf[1]! & 0x7f;
    const name = CODEC_OF[pt];
    if (!name) return; // telephone-event, comfort noise
    this.packets[pt] = (this.packets[pt] ?? 0) + 1;
    if (this.next === name) {
      this.sending = name;
      this.next = null;
    }
    const codec = this.codec(name);
    const pcm = new Int16Array(codec.frameSamples);
    const n = codec.decode(buf.subarray(12 + (buf[0]! & 0x0f) * 4), pcm);
    let energy = 0;
    let level = 0;
    for (let i = 0; i < n; i++) {
      energy += pcm[i]! * pcm[i]!;
      level += Math.abs(pcm[i]!);
    }
    const share = relativePower(goertzelPower(pcm, 0, n, goertzelCoeff(this.hearHz, codec.sampleRate)), n, energy);
    if (n > 0 && level / n > LEVEL_FLOOR && share > TONE_SHARE) this.tones[pt] = (this.tones[pt] ?? 0) + 1;
  }

  /** One 20 ms frame of its tone in the codec it sends in (the phase carried on at that codec's rate). */
  private frame(phase: { t: number }): Buffer {
    const codec = this.codec(this.sending);
    const pcm = new Int16Array(codec.frameSamples);
    for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(8000 * Math.sin(2 * Math.PI * this.sendHz * (phase.t + i / codec.sampleRate)));
    phase.t += 0.02;
    const out = new Uint8Array(codec.maxPayloadBytes);
    return Buffer.from(out.subarray(0, codec.encode(pcm, out)));
  }

  /** Its leg is the platform's RTP port `port`: it sends there every 20 ms by the wall clock, and hears only it. */
  private talkTo(port: number): void {
    this.leg = port;
    let seq = 1;
    let ts = 0;
    const phase = { t: 0 };
    const start = performance.now();
    let sent = 0;
    this.timer = setInterval(() => {
      const due = Math.floor((performance.now() - start) / 20) + 1;
      if (due - sent > 10) sent = due - 10; // a process slowed for long does not burst more than 10
      for (; sent < due; sent++) {
        const h = Buffer.alloc(12);
        h[0] = 0x80;
        h[1] = PAYLOAD_TYPE[this.sending];
        h.writeUInt16BE(seq++ & 0xffff, 2);
        h.writeUInt32BE(ts >>> 0, 4);
        ts += 160; // 20 ms on the 8000 Hz RTP clock of all three (G.722's too, RFC 3551)
        h.writeUInt32BE(PARTY_SSRC, 8);
        this.sock.send(Buffer.concat([h, this.frame(phase)]), port, '127.0.0.1');
      }
    }, 20);
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    for (const c of this.codecs.values()) c.close();
    this.sock.close();
  }
}
