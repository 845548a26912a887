/**
 * G.711 µ-law (PCMU) and A-law (PCMA) behind the Codec interface: the table codec of g711.ts, 8 kHz,
 * static payload types 0 and 8, concealment by pitch repetition (plc.ts). Pure TypeScript: G.711 works
 * without the native codec module.
 */
import { type Codec, type CodecName, type PayloadTypeRule, CodecError, checkInt, checkPayload, rangeError } from './codec';
import { type G711Law, decodeG711Range, encodeG711Range, PT_PCMA, PT_PCMU } from '../../core/audio/g711';
import { PitchPlc } from './plc';

export interface G711Options {
  /** Packet duration, ms: 10-60 in 10 ms steps (default 20). */
  ptime?: number;
}

export class G711Codec implements Codec {
  readonly name: CodecName;
  readonly clockRate = 8000;
  readonly sampleRate = 8000;
  readonly channels = 1;
  readonly rtpmapChannels = 1;
  readonly frameMs: number;
  readonly frameSamples: number;
  readonly frameTicks: number;
  readonly payloadType: PayloadTypeRule;
  readonly maxPayloadBytes: number;
  readonly hasFec = false;
  private readonly plc = new PitchPlc(8000);
  /** labels for errors, made once (a template per call would allocate per packet) */
  private readonly decodeLabel: string;
  private readonly recoverLabel: string;
  private open = true;

  constructor(
    readonly law: G711Law,
    opts: G711Options = {},
  ) {
    if (law !== 'PCMU' && law !== 'PCMA') throw rangeError(`G.711 law must be PCMU or PCMA (got ${String(law)})`);
    const ptime = opts.ptime ?? 20;
    if (ptime % 10 !== 0) throw rangeError(`G.711 ptime must be 10-60 in 10 ms steps (got ${String(ptime)})`);
    this.frameMs = checkInt('G.711 ptime', ptime, 10, 60);
    this.name = law;
    this.decodeLabel = `${law} decode`;
    this.recoverLabel = `${law} recover`;
    this.frameSamples = this.frameMs * 8;
    this.frameTicks = this.frameSamples;
    this.maxPayloadBytes = this.frameSamples;
    this.payloadType = { kind: 'static', pt: law === 'PCMU' ? PT_PCMU : PT_PCMA };
  }

  get closed(): boolean {
    return !this.open;
  }

  private check(fn: string): void {
    if (!this.open) throw new CodecError('ERR_CODEC_CLOSED', `${this.name} ${fn}: the codec is closed`);
  }

  encode(pcm: Int16Array, out: Uint8Array): number {
    this.check('encode');
    const n = this.frameSamples;
    if (pcm.length < n) throw rangeError(`${this.name} encode: pcm holds ${pcm.length} samples, a frame is ${n}`);
    if (out.length < n) throw rangeError(`${this.name} encode: out holds ${out.length} bytes, a frame needs ${n}`);
    return encodeG711Range(this.law, pcm, 0, n, out);
  }

  decode(payload: Uint8Array, out: Int16Array, offset?: number, length?: number): number {
    this.check('decode');
    const off = offset ?? 0;
    const len = length ?? payload.length - off;
    checkPayload(this.decodeLabel, payload, off, len);
    if (out.length < len) throw rangeError(`${this.name} decode: out holds ${out.length} samples, the payload decodes to ${len}`);
    const n = decodeG711Range(this.law, payload, off, off + len, out);
    this.plc.rx(out, n);
    return n;
  }

  conceal(out: Int16Array): number {
    this.check('conceal');
    if (out.length < this.frameSamples) throw rangeError(`${this.name} conceal: out holds ${out.length} samples, a frame is ${this.frameSamples}`);
    return this.plc.fillin(out, this.frameSamples);
  }

  recover(next: Uint8Array, out: Int16Array, offset?: number, length?: number): number {
    checkPayload(this.recoverLabel, next, offset ?? 0, length ?? next.length - (offset ?? 0));
    return this.conceal(out);
  }

  close(): void {
    this.open = false;
  }
}
