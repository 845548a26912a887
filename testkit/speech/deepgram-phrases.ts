// The Deepgram stand-in's session when it is given a phrase recogniser (deepgram-server.ts): it
// hears words as Deepgram's live API reports them (its reference, "Endpointing", "Interim Results",
// "Utterance End"), for the benchmarks that need a recogniser that is both fast and right:
// - an utterance is voiced 20 ms frames (mean |sample| > 100: the "s" of "story" is about 200) with pauses shorter than 100 ms inside
//   it (the stops of "story", "okay": a vendor's VAD does not end speech there);
// - `interim_results=true`: interim Results (`is_final: false`) as the words are recognised, not on
//   a fixed clock: Deepgram's reference ("Interim Results") says it sends its guesses as more audio
//   comes in and corrects them; so the utterance so far is matched (the recogniser's open-ended
//   match) every 100 ms of its voiced audio, and an interim goes out whenever the guess changes;
// - `endpointing` (ms, default 10 as Deepgram's; `false`: none): after that much silence (at least
//   the 100 ms above) the utterance is final: Results with `is_final: true, speech_final: true`,
//   its words spread over the utterance's time;
// - `utterance_end_ms` (with interim results): `{type: "UtteranceEnd", last_word_end}` once no word
//   has been heard for that long after the last final word;
// - CloseStream: what is pending as a final (`from_finalize: true`), Metadata, a 1000 close.
// Every message leaves `latencyMs` after the audio that produced it was received (the vendor's
// recognition and network time), in order.
import type { WebSocket } from 'ws';
import type { PhraseRecogniser } from './phrase-recogniser';

export interface PhraseSessionOptions {
  recogniser: PhraseRecogniser;
  latencyMs: number;
  /** each final as recognised (its text, '' for nothing near enough, and the DTW distance): for the benchmarks' diagnosis */
  onFinal?: (text: string, distance: number, ms: number) => void;
}

/** Pauses shorter than this are inside an utterance, ms. */
const MIN_PAUSE_MS = 100;
/** how often the utterance so far is matched for an interim guess, ms of voiced audio */
const INTERIM_EVERY_MS = 100;
/** mean |sample| of a voiced 20 ms frame */
const VOICED = 100;

export function phraseSession(ws: WebSocket, query: URLSearchParams, o: PhraseSessionOptions, onBytes: (n: number) => void, onClose: () => void): void {
  const session = new PhraseSession(ws, query, o);
  ws.on('close', onClose);
  ws.on('message', (data, isBinary) => {
    if (session.closed) return;
    if (!isBinary) {
      const msg = JSON.parse(data.toString()) as { type: string };
      if (msg.type === 'CloseStream') session.closeStream();
      return;
    }
    const buf = data as Buffer;
    onBytes(buf.length);
    session.audioIn(buf);
  });
}

/** The query's settings: the rate and frame, when an utterance ends, interim results, UtteranceEnd. */
function settingsOf(query: URLSearchParams) {
  const rate = Number(query.get('sample_rate'));
  const ep = query.get('endpointing');
  const endpointMs = ep === 'false' ? Infinity : Math.max(MIN_PAUSE_MS, ep && Number.isFinite(Number(ep)) ? Number(ep) : 10);
  return {
    rate,
    frame: Math.round(rate / 50),
    endFrames: Math.ceil(endpointMs / 20),
    interims: query.get('interim_results') === 'true',
    ueMs: Number(query.get('utterance_end_ms') ?? 0),
    model: query.get('model') ?? 'nova-2',
  };
}

/** One stream: frames in, the utterance being heard, the messages out (each `latencyMs` late, in order). */
class PhraseSession {
  closed = false;
  private readonly cfg: ReturnType<typeof settingsOf>;
  private pcm = Buffer.alloc(0);
  private t = 0;
  private voicedStart = -1;
  private lastVoiced = -1;
  private samples: number[] = [];
  /** the utterance's samples up to its last voiced frame */
  private voicedLen = 0;
  private nextInterim = 0;
  /** the last interim guess sent in this utterance */
  private lastGuess = '';
  /** the end of the last final word (frames), -1 once its UtteranceEnd went */
  private lastWordEnd = -1;
  /** the utterance's recognition as it grows (its analysis kept from one match to the next) */
  private utterance: ReturnType<PhraseRecogniser['utterance']>;

  constructor(
    private readonly ws: WebSocket,
    query: URLSearchParams,
    private readonly o: PhraseSessionOptions,
  ) {
    this.cfg = settingsOf(query);
    this.utterance = o.recogniser.utterance();
  }

  /** CloseStream: what is pending as a final (from_finalize), Metadata, a 1000 close. */
  closeStream(): void {
    this.closed = true;
    this.finalise({ speech_final: false, from_finalize: true });
    this.send({ type: 'Metadata', request_id: 'local', duration: this.sec(this.t), channels: 1 }, () => this.ws.close(1000));
  }

  audioIn(buf: Buffer): void {
    const { frame } = this.cfg;
    this.pcm = Buffer.concat([this.pcm, buf]);
    while (this.pcm.length >= frame * 2) {
      let sum = 0;
      const f: number[] = [];
      for (let i = 0; i < frame; i++) {
        const v = this.pcm.readInt16LE(i * 2);
        f.push(v);
        sum += Math.abs(v);
      }
      this.pcm = this.pcm.subarray(frame * 2);
      this.frameIn(f, sum / frame > VOICED);
      this.t++;
    }
  }

  /** One 20 ms frame: the utterance grows (an interim guess every INTERIM_EVERY_MS), or a pause long enough ends it. */
  private frameIn(f: number[], voiced: boolean): void {
    const { t } = this;
    const { interims, endFrames, ueMs } = this.cfg;
    if (voiced) {
      if (this.voicedStart < 0) {
        this.voicedStart = t;
        this.nextInterim = t + INTERIM_EVERY_MS / 20;
      }
      this.lastVoiced = t;
      this.samples.push(...f);
      this.voicedLen = this.samples.length;
      if (interims && t >= this.nextInterim) {
        this.nextInterim = t + INTERIM_EVERY_MS / 20;
        const { text } = this.utterance(this.audio(), true);
        if (text && text !== this.lastGuess) this.results(text, this.voicedStart, t + 1, false);
        if (text) this.lastGuess = text;
      }
    } else if (this.voicedStart >= 0) {
      if (t - this.lastVoiced >= endFrames) this.finalise();
      // the pause is part of the utterance until it ends it
      else this.samples.push(...f);
    }
    if (interims && ueMs >= 1000 && this.lastWordEnd >= 0 && this.voicedStart < 0 && (t + 1 - this.lastWordEnd) * 20 >= ueMs) {
      this.send({ type: 'UtteranceEnd', channel: [0, 1], last_word_end: this.sec(this.lastWordEnd) });
      this.lastWordEnd = -1;
    }
  }

  private finalise(extra: object = {}): void {
    if (this.voicedStart < 0) return;
    const { text, distance } = this.utterance(this.audio());
    this.o.onFinal?.(text, distance, (this.lastVoiced + 1 - this.voicedStart) * 20);
    this.results(text, this.voicedStart, this.lastVoiced + 1, true, extra);
    if (text) this.lastWordEnd = this.lastVoiced + 1;
    this.voicedStart = -1;
    this.samples = [];
    this.voicedLen = 0;
    this.lastGuess = '';
    this.utterance = this.o.recogniser.utterance();
  }

  private sec(f: number): number {
    return (f * this.cfg.frame) / this.cfg.rate;
  }

  private send(msg: object, then?: () => void): void {
    setTimeout(() => {
      if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(msg));
      then?.();
    }, this.o.latencyMs);
  }

  /** Results, Deepgram's shape, the words spread over the utterance's time. */
  private results(text: string, from: number, to: number, final: boolean, extra: object = {}): void {
    const sec = (f: number) => this.sec(f);
    const words = text ? text.split(' ') : [];
    const step = (sec(to) - sec(from)) / Math.max(1, words.length);
    this.send({
      type: 'Results',
      channel_index: [0, 1],
      start: sec(from),
      duration: sec(to - from),
      is_final: final,
      speech_final: final,
      channel: { alternatives: [{ transcript: text, confidence: 0.9, words: words.map((w, i) => ({ word: w, start: sec(from) + i * step, end: sec(from) + (i + 1) * step, confidence: 0.9 })) }] },
      metadata: { request_id: 'local', model_info: { name: this.cfg.model } },
      ...extra,
    });
  }

  /** The utterance's audio at 8 kHz (the recogniser's rate). */
  private audio(): Int16Array {
    const step = this.cfg.rate / 8000;
    const out = new Int16Array(Math.floor(this.voicedLen / step));
    for (let i = 0; i < out.length; i++) {
      let s = 0;
      for (let k = 0; k < step; k++) s += this.samples[i * step + k]!;
      out[i] = Math.round(s / step);
    }
    return out;
  }
}
