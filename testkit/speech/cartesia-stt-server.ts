// A local server speaking Cartesia's streaming STT protocol (GET /stt/websocket upgraded to a
// WebSocket, written from Cartesia's API reference): `X-API-Key` and `Cartesia-Version` on the upgrade
// (401 on a wrong key, 400 without the version), `model`, `encoding` (pcm_s16le, pcm_mulaw) and
// `sample_rate` in the query (400 otherwise); binary audio in; `transcript` messages out (`is_final`
// false while an utterance goes on, then true with `duration` and `words`); the text `finalize` is
// answered by the pending final and `flush_done`, `done` by the pending final, `{type:'done'}` and a
// 1000 close. Errors on demand: `{type:'error', status_code, message}` and a 1011 close.
import type http from 'node:http';
import type { WebSocket } from 'ws';
import { SttStandIn, ToneRecogniser, type SttSession, type Utterance } from './tone-stt';

const ENCODINGS = new Set(['pcm_s16le', 'pcm_mulaw']);

export class FakeCartesiaStt extends SttStandIn {
  constructor(key: string) {
    super(key, '/stt/websocket');
  }

  protected authorized(req: http.IncomingMessage): boolean {
    return req.headers['x-api-key'] === this.key;
  }

  protected check(q: URLSearchParams): number {
    if (!q.get('model') || !ENCODINGS.has(q.get('encoding') ?? '') || !['8000', '16000'].includes(q.get('sample_rate') ?? '')) return 400;
    return 0;
  }

  protected run(ws: WebSocket, s: SttSession): void {
    if (!s.headers['cartesia-version']) {
      ws.close(1008, 'Cartesia-Version is required');
      return;
    }
    const rate = Number(s.query.get('sample_rate'));
    const requestId = `req-${this.sessions.length}`;
    const msg = (final: boolean, u: Utterance) => ({
      type: 'transcript',
      request_id: requestId,
      is_final: final,
      text: u.text,
      duration: u.end - u.start,
      language: s.query.get('language') ?? 'en',
      ...(final ? { words: u.text.split(' ').map((w) => ({ word: w, start: u.start, end: u.end })) } : {}),
    });
    const rec = new ToneRecogniser(
      rate,
      this.words,
      (u) => this.send(ws, msg(false, u)),
      (u) => {
        s.finals.push(u.text);
        this.send(ws, msg(true, u));
      },
      15,
      this.phrases,
    );
    let failed = false;
    ws.on('message', (data, isBinary) => {
      if (failed) return;
      if (!isBinary) {
        const text = data.toString();
        s.controls.push(text);
        if (text === 'finalize') {
          rec.flush();
          this.send(ws, { type: 'flush_done', request_id: requestId });
        } else if (text === 'done') {
          rec.flush();
          this.send(ws, { type: 'done', request_id: requestId }, () => ws.close(1000));
        }
        return;
      }
      const buf = data as Buffer;
      this.audio(s, buf.length);
      rec.push(buf);
      if (this.failAfterMs > 0 && rec.seconds * 1000 >= this.failAfterMs) {
        failed = true;
        this.send(ws, { type: 'error', request_id: requestId, status_code: 500, message: 'internal error' }, () => ws.close(1011));
      }
    });
  }
}
