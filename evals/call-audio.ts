/**
 * Both tracks of a simulated call (issue 56 "both channels' audio", docs/evals.md "Both tracks of a
 * call"): what the caller sent (its speech with its background mixed in, its digits as their DTMF
 * tones: on the wire they are RFC 4733 events) and what it heard (the agent), each kept as a mono
 * 8 kHz 16-bit WAV whose sample i is i/8 ms after the answer, the transcript's t_ms, so both play in
 * step with the timeline. A sent 20 ms slot goes where it was due (the phone's clock: the track is
 * gapless); a heard packet goes where its RTP timestamp puts it after the stream's first packet,
 * placed at its arrival, re-anchored at its arrival whenever the two disagree by more than
 * REANCHOR_MS (a new SSRC, a jump, a sender drifting), so it is never further than that from when the
 * caller heard it. At most `capMs` of each track is kept (EVALS_AUDIO_MAX_S): a longer call keeps its
 * first capMs and says so. Written through the platform's object store once the call is over.
 */
import type { ObjectStore } from '../core/storage/local';
import { wavFile } from '../core/audio/wav';
import { evalAudioFile, evalAudioKey, evalAudioPath } from '../core/evals/audio';
import type { EvalCallAudio } from '../core/evals/schema';
import type { HeardAudio, RtpPhone, SentAudio } from './rtp-phone';

const RATE = 8000;
const PER_MS = RATE / 1000;
/** a heard packet further than this from where its timestamp puts it is placed at its arrival */
export const REANCHOR_MS = 60;
/** each digit's pair of frequencies (Hz), by RFC 4733 event code: 0-9, *, #, A-D */
const DTMF_LOW = [941, 697, 697, 697, 770, 770, 770, 852, 852, 852, 941, 941, 697, 770, 852, 941];
const DTMF_HIGH = [1336, 1209, 1336, 1477, 1209, 1336, 1477, 1209, 1336, 1477, 1209, 1477, 1633, 1633, 1633, 1633];
const TONE_AMPLITUDE = 0.25 * 32767;

/** One track: samples by position from the answer, grown as written, never past the cap. */
class Track {
  private buf = new Int16Array(0);
  /** the furthest sample written, +1 */
  length = 0;
  /** samples that fell past the cap */
  dropped = false;

  constructor(private readonly cap: number) {}

  write(pos: number, pcm: Int16Array): void {
    const from = Math.max(0, -pos);
    const end = Math.min(pos + pcm.length, this.cap);
    if (pos + pcm.length > this.cap) this.dropped = true;
    if (end <= pos + from) return;
    if (end > this.buf.length) {
      const grown = new Int16Array(Math.min(this.cap, Math.max(end, this.buf.length * 2, 10 * RATE)));
      grown.set(this.buf);
      this.buf = grown;
    }
    this.buf.set(pcm.subarray(from, end - pos), pos + from);
    this.length = Math.max(this.length, end);
  }

  /** The first `n` samples (silence where nothing was written). */
  samples(n: number): Int16Array {
    const out = new Int16Array(n);
    out.set(this.buf.subarray(0, Math.min(n, this.buf.length)));
    return out;
  }
}

/** A 20 ms slot of a digit's two tones, in phase with the track (sample `pos` on). */
function toneSlot(code: number, pos: number): Int16Array {
  const lo = DTMF_LOW[code] ?? 0;
  const hi = DTMF_HIGH[code] ?? 0;
  const pcm = new Int16Array(20 * PER_MS);
  for (let i = 0; i < pcm.length; i++) {
    const t = (pos + i) / RATE;
    pcm[i] = Math.round(TONE_AMPLITUDE * (Math.sin(2 * Math.PI * lo * t) + Math.sin(2 * Math.PI * hi * t)));
  }
  return pcm;
}

/** What was kept of a call: each track's WAV, their length, the call's, and whether the cap cut it. */
export interface KeptAudio {
  caller: Buffer;
  agent: Buffer;
  duration_ms: number;
  call_ms: number;
  truncated: boolean;
}

export class CallAudio {
  private readonly sent: Track;
  private readonly heard: Track;
  /** the heard stream's anchor: its SSRC, an RTP timestamp and where that sample went */
  private anchor: { ssrc: number; ts: number; pos: number } | null = null;

  constructor(private readonly capMs: number) {
    this.sent = new Track(capMs * PER_MS);
    this.heard = new Track(capMs * PER_MS);
  }

  /** Keeps what `phone` sends and hears from now on; `t0` is the answer (performance.now()). Returns the detach. */
  attach(phone: RtpPhone, t0: number): () => void {
    const offSent = phone.onSent((s) => this.onSent(s, t0));
    const offHeard = phone.onHeard((p) => this.onHeard(p, t0));
    return () => {
      offSent();
      offHeard();
    };
  }

  onSent(s: SentAudio, t0: number): void {
    const pos = Math.round((s.due - t0) * PER_MS);
    this.sent.write(pos, 'pcm' in s ? s.pcm : toneSlot(s.digit, pos));
  }

  onHeard(p: HeardAudio, t0: number): void {
    const arrived = Math.round((p.at - t0) * PER_MS);
    const a = this.anchor;
    // the signed 32-bit distance of the timestamps (they wrap)
    const byTs = a && a.ssrc === p.ssrc ? a.pos + ((p.ts - a.ts) | 0) : null;
    if (byTs === null || Math.abs(byTs - arrived) > REANCHOR_MS * PER_MS) {
      this.anchor = { ssrc: p.ssrc, ts: p.ts, pos: arrived };
      this.heard.write(arrived, p.pcm);
    } else this.heard.write(byTs, p.pcm);
  }

  /** Both tracks up to the call's end (`endMs` after the answer), at most the cap, as WAV files. */
  finish(endMs: number): KeptAudio {
    const callSamples = Math.max(Math.round(endMs * PER_MS), this.sent.length, this.heard.length);
    const cap = this.capMs * PER_MS;
    const n = Math.min(callSamples, cap);
    return {
      caller: wavFile(this.sent.samples(n), RATE),
      agent: wavFile(this.heard.samples(n), RATE),
      duration_ms: n / PER_MS,
      call_ms: Math.round(endMs),
      truncated: callSamples > cap || this.sent.dropped || this.heard.dropped,
    };
  }
}

/** Writes both tracks of the call to `store` under the run; the result's `audio` naming them. Throws when the store refuses. */
export async function storeCallAudio(store: ObjectStore, at: { customerId: string; runId: string; sipCallId: string }, kept: KeptAudio): Promise<EvalCallAudio> {
  const caller = evalAudioFile(at.sipCallId, 'caller');
  const agent = evalAudioFile(at.sipCallId, 'agent');
  await store.put(evalAudioKey(at.customerId, at.runId, caller), kept.caller);
  await store.put(evalAudioKey(at.customerId, at.runId, agent), kept.agent);
  return {
    caller_url: evalAudioPath(at.runId, caller),
    agent_url: evalAudioPath(at.runId, agent),
    format: 'wav',
    sample_rate: RATE,
    duration_ms: kept.duration_ms,
    call_ms: kept.call_ms,
    truncated: kept.truncated,
    ...(kept.truncated ? { note: `the call lasted ${(kept.call_ms / 1000).toFixed(1)} s: its first ${kept.duration_ms / 1000} s are kept (EVALS_AUDIO_MAX_S)` } : {}),
  };
}
