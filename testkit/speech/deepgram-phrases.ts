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
  const rate = Number(query.get('sample_rate'));
  const frame = Math.round(rate / 50);
  const ep = query.get('endpointing');
  const endpointMs = ep === 'false' ? Infinity : Math.max(MIN_PAUSE_MS, ep && Number.isFinite(Number(ep)) ? Number(ep) : 10);
  const endFrames = Math.ceil(endpointMs / 20);
  const interims = query.get('interim_results') === 'true';
  const ueMs = Number(query.get('utterance_end_ms') ?? 0);
  const model = query.get('model') ?? 'nova-2';
  const sec = (f: number) => (f * frame) / rate;
  let pcm = Buffer.alloc(0);
  let t = 0;
  let voicedStart = -1;
  let lastVoiced = -1;
  let samples: number[] = [];
  /** the utterance's samples up to its last voiced frame */
  let voicedLen = 0;
  let nextInterim = 0;
  /** the last interim guess sent in this utterance */
  let lastGuess = '';
  /** the end of the last final word (frames), -1 once its UtteranceEnd went */
  let lastWordEnd = -1;
  let closed = false;
  /** the utterance's recognition as it grows (its analysis kept from one match to the next) */
  let utterance = o.recogniser.utterance();
  const send = (msg: object, then?: () => void) =>
    setTimeout(() => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
      then?.();
    }, o.latencyMs);
  const results = (text: string, from: number, to: number, final: boolean, extra: object = {}) => {
    const words = text ? text.split(' ') : [];
    const step = (sec(to) - sec(from)) / Math.max(1, words.length);
    send({
      type: 'Results',
      channel_index: [0, 1],
      start: sec(from),
      duration: sec(to - from),
      is_final: final,
      speech_final: final,
      channel: { alternatives: [{ transcript: text, confidence: 0.9, words: words.map((w, i) => ({ word: w, start: sec(from) + i * step, end: sec(from) + (i + 1) * step, confidence: 0.9 })) }] },
      metadata: { request_id: 'local', model_info: { name: model } },
      ...extra,
    });
  };
  // the utterance's audio at 8 kHz (the recogniser's rate)
  const audio = () => {
    const step = rate / 8000;
    const out = new Int16Array(Math.floor(voicedLen / step));
    for (let i = 0; i < out.length; i++) {
      let s = 0;
      for (let k = 0; k < step; k++) s += samples[i * step + k]!;
      out[i] = Math.round(s / step);
    }
    return out;
  };
  const finalise = (extra: object = {}) => {
    if (voicedStart < 0) return;
    const { text, distance } = utterance(audio());
    o.onFinal?.(text, distance, (lastVoiced + 1 - voicedStart) * 20);
    results(text, voicedStart, lastVoiced + 1, true, extra);
    if (text) lastWordEnd = lastVoiced + 1;
    voicedStart = -1;
    samples = [];
    voicedLen = 0;
    lastGuess = '';
    utterance = o.recogniser.utterance();
  };
  ws.on('close', onClose);
  ws.on('message', (data, isBinary) => {
    if (closed) return;
    if (!isBinary) {
      const msg = JSON.parse(data.toString()) as { type: string };
      if (msg.type === 'CloseStream') {
        closed = true;
        finalise({ speech_final: false, from_finalize: true });
        send({ type: 'Metadata', request_id: 'local', duration: sec(t), channels: 1 }, () => ws.close(1000));
      }
      return;
    }
    const buf = data as Buffer;
    onBytes(buf.length);
    pcm = Buffer.concat([pcm, buf]);
    while (pcm.length >= frame * 2) {
      let sum = 0;
      const f: number[] = [];
      for (let i = 0; i < frame; i++) {
        const v = pcm.readInt16LE(i * 2);
        f.push(v);
        sum += Math.abs(v);
      }
      pcm = pcm.subarray(frame * 2);
      if (sum / frame > VOICED) {
        if (voicedStart < 0) {
          voicedStart = t;
          nextInterim = t + INTERIM_EVERY_MS / 20;
        }
        lastVoiced = t;
        samples.push(...f);
        voicedLen = samples.length;
        if (interims && t >= nextInterim) {
          nextInterim = t + INTERIM_EVERY_MS / 20;
          const { text } = utterance(audio(), true);
          if (text && text !== lastGuess) results(text, voicedStart, t + 1, false);
          if (text) lastGuess = text;
        }
      } else if (voicedStart >= 0) {
        if (t - lastVoiced >= endFrames) finalise();
        // the pause is part of the utterance until it ends it
        else samples.push(...f);
      }
      if (interims && ueMs >= 1000 && lastWordEnd >= 0 && voicedStart < 0 && (t + 1 - lastWordEnd) * 20 >= ueMs) {
        send({ type: 'UtteranceEnd', channel: [0, 1], last_word_end: sec(lastWordEnd) });
        lastWordEnd = -1;
      }
      t++;
    }
  });
}
