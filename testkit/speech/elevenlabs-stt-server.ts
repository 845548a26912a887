// A local server speaking ElevenLabs' realtime speech-to-text protocol (GET /v1/speech-to-text/realtime
// upgraded to a WebSocket, written from its AsyncAPI reference): `xi-api-key` on the upgrade (401 on a
// wrong key), `model_id` and `audio_format` (pcm_8000, pcm_16000, ulaw_8000) in the query (400
// otherwise); `session_started` first; JSON `input_audio_chunk` messages in (`audio_base_64`,
// `commit`, `sample_rate`); `partial_transcript` while an utterance goes on; with `commit_strategy=vad`
// an utterance ends after `vad_silence_threshold_secs` of silence (its VAD commit) and is answered
// with `committed_transcript` and, with `include_timestamps=true`, `committed_transcript_with_timestamps`;
// a chunk with `commit: true` commits what is pending (answered even when empty). Errors on demand: a
// `transcriber_error` message and a 1011 close; a chunk with another `sample_rate` than the format's is
// an `input_error`.
import type http from 'node:http';
import type { WebSocket } from 'ws';
import { SttStandIn, ToneRecogniser, type SttSession, type Utterance } from './tone-stt';

const FORMATS: Record<string, number> = { pcm_8000: 8000, pcm_16000: 16000, ulaw_8000: 8000 };

interface Chunk {
  message_type?: string;
  audio_base_64?: string;
  commit?: boolean;
  sample_rate?: number;
}

export class FakeElevenLabsStt extends SttStandIn {
  constructor(key: string) {
    super(key, '/v1/speech-to-text/realtime');
  }

  protected authorized(req: http.IncomingMessage): boolean {
    return req.headers['xi-api-key'] === this.key;
  }

  protected check(q: URLSearchParams): number {
    return q.get('model_id') && FORMATS[q.get('audio_format') ?? ''] ? 0 : 400;
  }

  protected run(ws: WebSocket, s: SttSession): void {
    const rate = FORMATS[s.query.get('audio_format')!]!;
    const vad = s.query.get('commit_strategy') === 'vad';
    const timestamps = s.query.get('include_timestamps') === 'true';
    const silenceFrames = Math.max(1, Math.round(Number(s.query.get('vad_silence_threshold_secs') ?? '1.5') * 50));
    const commit = (u: Utterance | null) => {
      const text = u?.text ?? '';
      if (u) s.finals.push(text);
      this.send(ws, { message_type: 'committed_transcript', text });
      if (timestamps) {
        const words = u
          ? u.text.split(' ').flatMap((w, i) => [...(i ? [{ text: ' ', start: u.start, end: u.start, type: 'spacing' }] : []), { text: w, start: u.start, end: u.end, type: 'word', logprob: -0.1 }])
          : [];
        this.send(ws, { message_type: 'committed_transcript_with_timestamps', text, language_code: s.query.get('language_code') ?? 'en', words });
      }
    };
    let manual = false;
    const rec = new ToneRecogniser(
      rate,
      this.words,
      (u) => this.send(ws, { message_type: 'partial_transcript', text: u.text }),
      (u) => {
        // a VAD commit, or the one a `commit: true` chunk asked for
        if (vad || manual) commit(u);
      },
      silenceFrames,
      this.phrases,
    );
    this.send(ws, {
      message_type: 'session_started',
      session_id: `sess-${this.sessions.length}`,
      config: { sample_rate: rate, audio_format: s.query.get('audio_format'), model_id: s.query.get('model_id'), commit_strategy: vad ? 'vad' : 'manual' },
    });
    let failed = false;
    ws.on('message', (data, isBinary) => {
      if (failed || isBinary) return;
      let m: Chunk;
      try {
        m = JSON.parse(data.toString()) as Chunk;
      } catch {
        return this.send(ws, { message_type: 'input_error', error: 'invalid JSON' });
      }
      if (m.message_type !== 'input_audio_chunk') return void s.controls.push(data.toString());
      if (m.sample_rate !== undefined && m.sample_rate !== rate) return this.send(ws, { message_type: 'input_error', error: `sample_rate ${m.sample_rate} does not match ${rate}` });
      const buf = Buffer.from(m.audio_base_64 ?? '', 'base64');
      this.audio(s, buf.length);
      rec.push(buf);
      if (m.commit) {
        s.controls.push('commit');
        manual = true;
        const u = rec.flush();
        manual = false;
        if (!u) commit(null);
      }
      if (this.failAfterMs > 0 && rec.seconds * 1000 >= this.failAfterMs) {
        failed = true;
        this.send(ws, { message_type: 'transcriber_error', error: 'transcriber failed' }, () => ws.close(1011));
      }
    });
  }
}
