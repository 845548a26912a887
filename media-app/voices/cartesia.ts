/**
 * Cartesia: the WebSocket {base as ws(s)}/tts/websocket, key in `X-API-Key` with `Cartesia-Version`
 * on the upgrade. One generation request { model_id, transcript, voice: { mode: 'id', id },
 * output_format: { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 }, context_id,
 * language }; the answer is `chunk` messages (base64 µ-law in `data`) and then `done`, or `error`.
 * A refused key fails the upgrade (401).
 */
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { netError } from './http-stream';
import { ulawToPcm } from './pcm';
import { statusError, VoiceError, type VendorVoice, type VoiceRequest } from './vendor';

const VERSION = '2025-04-16';
const DEFAULT_VOICE = 'bf0a246a-8642-498a-9950-80c35e9276b5';

interface CartesiaMessage {
  type?: string;
  data?: string;
  done?: boolean;
  error?: string;
  status_code?: number;
}

export const cartesia: VendorVoice = {
  name: 'cartesia',
  async *stream(req: VoiceRequest) {
    const url = new URL(`${req.baseUrl.replace(/^http/, 'ws')}/tts/websocket`);
    let checked;
    try {
      checked = await req.egress.checkDestination(url.hostname);
    } catch (e) {
      throw netError('cartesia', e);
    }
    const ws = new WebSocket(url, { headers: { 'X-API-Key': req.apiKey, 'Cartesia-Version': VERSION }, lookup: checked.lookup, handshakeTimeout: 10_000 });
    // messages and the end, queued for the generator
    const queue: Int16Array[] = [];
    let end: { error?: VoiceError } | null = null;
    let wake: (() => void) | null = null;
    const poke = () => {
      wake?.();
      wake = null;
    };
    const finish = (error?: VoiceError) => {
      if (!end) end = { error };
      poke();
    };
    const contextId = randomUUID();
    ws.on('unexpected-response', (_r, res) => finish(statusError('cartesia', res.statusCode ?? 0)));
    ws.on('error', (e) => finish(netError('cartesia', e)));
    ws.on('close', () => finish(new VoiceError('cartesia', 'failed', 'the connection closed before the audio was done')));
    ws.on('open', () => {
      ws.send(
        JSON.stringify({
          model_id: 'sonic-2',
          transcript: req.text,
          voice: { mode: 'id', id: req.voice || DEFAULT_VOICE },
          output_format: { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 },
          language: req.language.slice(0, 2).toLowerCase(),
          context_id: contextId,
          continue: false,
        }),
      );
    });
    ws.on('message', (raw, isBinary) => {
      if (isBinary) return;
      let m: CartesiaMessage;
      try {
        m = JSON.parse(Buffer.isBuffer(raw) ? raw.toString('utf8') : Buffer.concat(Array.isArray(raw) ? raw : [Buffer.from(raw)]).toString('utf8')) as CartesiaMessage;
      } catch {
        return finish(new VoiceError('cartesia', 'failed', 'the vendor sent a message that is not JSON'));
      }
      if (m.type === 'chunk' && typeof m.data === 'string') {
        queue.push(ulawToPcm(Buffer.from(m.data, 'base64')));
        poke();
      } else if (m.type === 'done') finish();
      else if (m.type === 'error') finish(m.status_code ? statusError('cartesia', m.status_code) : new VoiceError('cartesia', 'failed', 'synthesis failed'));
    });
    const onAbort = () => finish(new VoiceError('cartesia', 'timeout', 'cancelled'));
    req.signal.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        while (queue.length) yield queue.shift()!;
        if (end) {
          const { error } = end as { error?: VoiceError };
          if (error) throw error;
          return;
        }
        await new Promise<void>((r) => (wake = r));
      }
    } finally {
      req.signal.removeEventListener('abort', onAbort);
      ws.removeAllListeners();
      ws.on('error', () => undefined);
      ws.terminate();
    }
  },
};
