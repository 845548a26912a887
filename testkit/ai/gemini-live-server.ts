// A stand-in for Gemini's Live API on loopback (plain ws: the SDK opens ws:// for an http:// base
// URL), written from the public API reference and the @google/genai SDK's source:
// GET /ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=<key>. Another
// key: the upgrade is taken and the socket closed with 1007 "API key not valid. Please pass a valid
// API key." as the service does. The first message is `setup` (→ setupComplete); realtimeInput audio
// (PCM 16 kHz; speech found by its energy: the caller's speech over a response being generated
// interrupts it → serverContent.interrupted; its words → inputTranscription as they come; its end → a response); clientContent with
// turnComplete → a response (the greeting); toolResponse → the model's next response. A response is
// a tone as modelTurn inlineData audio/pcm;rate=24000 (faster than real time, as the vendor sends)
// with outputTranscription, then turnComplete; or a toolCall. What the client sent is kept.
import type { WebSocket } from 'ws';
import type { RealtimeReply, RealtimeScript } from './realtime-server';
import { EnergyVad, pcmTone } from './energy-vad';
import { pacedAudio, serveStandIn, type SpeechStandIn } from './stand-in';

export const GEMINI_LIVE_PATH = '/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent';

export interface GeminiReceived {
  at: number;
  kind: string;
  message: Record<string, unknown>;
}

export interface GeminiLiveServer extends SpeechStandIn {
  /** every client message but realtimeInput audio, as received (kind: its one top-level field) */
  received: GeminiReceived[];
  /** the mimeTypes of the caller audio received */
  audioMimeTypes: Set<string>;
}

let seq = 0;

/** The stand-in on a free loopback port (`url` http://…, the SDK's base URL), taking `key`, answering as `script` says. */
export function startGeminiLiveServer(key: string, script: RealtimeScript): Promise<GeminiLiveServer> {
  const own = { received: [], audioMimeTypes: new Set<string>() };
  return serveStandIn<GeminiLiveServer>('http', own, { key, script }, {}, (state, wss, req, socket, head) => {
    // the SDK joins its base URL's `/` and `/ws/...`: the service takes the doubled slash
    const [pathname = '', query = ''] = (req.url ?? '/').split('?');
    const u = new URL(`http://x/?${query}`);
    if (pathname.replace(/^\/+/, '/') !== GEMINI_LIVE_PATH) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    const given = u.searchParams.get('key') ?? req.headers['x-goog-api-key'];
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (given !== state.key) {
        state.refused++;
        ws.close(1007, 'API key not valid. Please pass a valid API key.');
        return;
      }
      session(ws, state);
    });
  });
}

function session(ws: WebSocket, s: GeminiLiveServer): void {
  const conv = new LiveSession(ws, s);
  ws.on('message', (raw) => conv.onMessage(String(raw)));
  ws.on('close', () => conv.active?.stop());
}

/** One client connection: setup first, the caller's audio to the VAD, turns answered as the script says. */
class LiveSession {
  private readonly vad = new EnergyVad();
  private turns = 0;
  private setUp = false;
  active: { stop: () => void } | null = null;
  private readonly callNames = new Map<string, string>();
  /** the caller's utterance being heard: its words (the first one sent at once) and the reply it gets */
  private utterance: { heard: string[]; reply: RealtimeReply } | null = null;

  constructor(
    private readonly ws: WebSocket,
    private readonly s: GeminiLiveServer,
  ) {
    if (s.script.dropAfterMs !== undefined) setTimeout(() => ws.close(1011, 'Internal error encountered.'), s.script.dropAfterMs);
  }

  private send(m: Record<string, unknown>): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(m));
  }

  onMessage(raw: string): void {
    const { ws, s } = this;
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return ws.close(1007, 'Invalid JSON payload received.');
    }
    const kind = Object.keys(m)[0] ?? '';
    if (!this.setUp && kind !== 'setup') return ws.close(1007, 'Request contains an invalid argument.');
    if (kind === 'realtimeInput') return this.realtimeInput((m.realtimeInput as { audio?: { data?: string; mimeType?: string } }).audio);
    s.received.push({ at: Date.now(), kind, message: m });
    switch (kind) {
      case 'setup': {
        this.setUp = true;
        const silence = (m.setup as { realtimeInputConfig?: { automaticActivityDetection?: { silenceDurationMs?: number } } }).realtimeInputConfig?.automaticActivityDetection?.silenceDurationMs;
        if (typeof silence === 'number') this.vad.silenceMs = silence;
        return this.send({ setupComplete: {} });
      }
      case 'clientContent': {
        const c = m.clientContent as { turnComplete?: boolean };
        if (c.turnComplete && s.received.filter((r) => r.kind === 'clientContent').length === 1) this.respond(s.script.greeting);
        return;
      }
      case 'toolResponse': {
        const rs = (m.toolResponse as { functionResponses?: { id?: string; response?: { output?: string } }[] }).functionResponses ?? [];
        const last = rs.at(-1);
        const next = s.script.afterCall(this.callNames.get(String(last?.id)) ?? '', String(last?.response?.output ?? ''));
        if (next) this.respond(next);
        return;
      }
    }
  }

  /** The caller's audio (16-bit PCM), 20 ms frames to the VAD. */
  private realtimeInput(audio: { data?: string; mimeType?: string } | undefined): void {
    const s = this.s;
    if (!audio?.data) return;
    s.audioMimeTypes.add(String(audio.mimeType));
    const bytes = Buffer.from(audio.data, 'base64');
    for (let at = 0; at + 640 <= bytes.length; at += 640) {
      const pcm = new Int16Array(320);
      for (let i = 0; i < 320; i++) pcm[i] = bytes.readInt16LE(at + i * 2);
      s.appendedMs += 20;
      this.frame(pcm);
    }
  }

  private frame(pcm: Int16Array): void {
    const s = this.s;
    const v = this.vad.frame(pcm);
    if (v === 'start') {
      s.speechStartedAt.push(Date.now());
      // the caller's speech over a response: generation stops, the client is told to drop its audio
      if (this.active) {
        this.active.stop();
        this.send({ serverContent: { interrupted: true } });
      }
      // the words come as they are recognised: the first one now, the rest at the end of the speech
      const t = s.script.turn(this.turns++);
      this.utterance = { heard: t.heard.split(' '), reply: t.reply };
      this.send({ serverContent: { inputTranscription: { text: this.utterance.heard[0] } } });
    } else if (v === 'stop' && this.utterance) {
      const u = this.utterance;
      this.utterance = null;
      if (u.heard.length > 1) this.send({ serverContent: { inputTranscription: { text: ` ${u.heard.slice(1).join(' ')}` } } });
      this.respond(u.reply);
    }
  }

  private respond(reply: RealtimeReply): void {
    this.active?.stop();
    if ('call' in reply) {
      const id = `function-call-${++seq}`;
      this.callNames.set(id, reply.call);
      this.send({ toolCall: { functionCalls: [{ id, name: reply.call, args: reply.arguments }] } });
      return;
    }
    this.speak(reply);
  }

  /**
   * After the vendor's latency, a tone at 24 kHz, 200 ms every 50 ms (four times real time), its words
   * transcribed in step with the audio; then generationComplete and turnComplete. Stopped by the caller.
   */
  private speak(reply: { say: string; ms: number; hz?: number }): void {
    const send = (m: Record<string, unknown>) => this.send(m);
    const hz = reply.hz ?? 440;
    const words = reply.say.split(' ');
    let said = 0;
    const handle = pacedAudio(this.s, reply.ms, {
      chunk: (ms, sent) => {
        send({ serverContent: { modelTurn: { parts: [{ inlineData: { mimeType: 'audio/pcm;rate=24000', data: pcmTone(ms, hz, 24000, sent * 24).toString('base64') } }] } } });
        const upTo = Math.min(words.length, Math.ceil(((sent + ms) / reply.ms) * words.length));
        if (upTo > said) {
          send({ serverContent: { outputTranscription: { text: `${said ? ' ' : ''}${words.slice(said, upTo).join(' ')}` } } });
          said = upTo;
        }
      },
      done: () => {
        // what is left of the words, then the end of the turn
        if (said < words.length) send({ serverContent: { outputTranscription: { text: ` ${words.slice(said).join(' ')}` } } });
        send({ serverContent: { generationComplete: true } });
        send({ serverContent: { turnComplete: true } });
      },
      ended: () => {
        if (this.active === handle) this.active = null;
      },
    });
    this.active = handle;
  }
}
