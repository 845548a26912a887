// A stand-in for Deepgram's Voice Agent API on loopback (plain ws), written from the public API
// reference and the @deepgram/sdk source: GET /v1/agent/converse with `Authorization: Token <key>`
// (or the `token, <key>` subprotocol; another key: HTTP 401 on the upgrade). Welcome, then Settings →
// SettingsApplied (audio in/out mulaw 8000 or linear16 16000 as the Settings say; a greeting is spoken
// at once); binary caller audio (speech found by its energy → UserStartedSpeaking, cutting the
// response being spoken; its end → ConversationText user, AgentThinking, a response);
// InjectUserMessage / InjectAgentMessage → a response; FunctionCallResponse → the agent's next response;
// UpdatePrompt → PromptUpdated. A response is ConversationText assistant, AgentStartedSpeaking, a
// tone as binary audio (faster than real time), AgentAudioDone; or a FunctionCallRequest. What the
// client sent is kept. AgentStartedSpeaking's total_latency is, as the reference defines it, the
// seconds from the end of the caller's utterance (its VAD's stop less the silence that ended it) to the
// reply's audio, through any function calls between; the greeting's is the stand-in's latency.
import type { WebSocket } from 'ws';
import { muLaw } from '../../media-engine';
import type { RealtimeReply, RealtimeScript } from './realtime-server';
import { EnergyVad, pcmTone } from './energy-vad';
import { pacedAudio, serveStandIn, type SpeechStandIn } from './stand-in';

export interface DeepgramReceived {
  at: number;
  type: string;
  message: Record<string, unknown>;
}

export interface DeepgramAgentServer extends SpeechStandIn {
  /** every JSON message of the client, as received */
  received: DeepgramReceived[];
  /** the Authorization header of the last accepted connection */
  authorization: string;
}

let seq = 0;

/** The stand-in on a free loopback port (`url` ws://…), taking `key`, answering as `script` says. */
export function startDeepgramAgentServer(key: string, script: RealtimeScript): Promise<DeepgramAgentServer> {
  const own = { received: [], authorization: '' };
  return serveStandIn<DeepgramAgentServer>('ws', own, { key, script }, { handleProtocols: (p) => (p.has('token') ? 'token' : false) }, (state, wss, req, socket, head) => {
    const pathname = (req.url ?? '/').split('?')[0];
    if (pathname !== '/v1/agent/converse') {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    const auth = String(req.headers.authorization ?? '');
    const proto = String(req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((p) => p.trim());
    const given = /^token /i.test(auth) ? auth.slice(6) : proto[0] === 'token' ? proto[1] : '';
    if (given !== state.key) {
      state.refused++;
      const body = JSON.stringify({ err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.' });
      socket.end(`HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\ndg-error: Invalid credentials.\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
      return;
    }
    state.authorization = auth;
    wss.handleUpgrade(req, socket, head, (ws) => session(ws, state));
  });
}

function session(ws: WebSocket, s: DeepgramAgentServer): void {
  const conv = new AgentSession(ws, s);
  ws.on('message', (raw, isBinary) => {
    if (isBinary) conv.audio(Buffer.isBuffer(raw) ? raw : Buffer.from(raw as ArrayBuffer));
    else conv.onMessage(String(raw));
  });
  ws.on('close', () => conv.active?.stop());
}

/** One client connection: Settings first, the caller's audio to the VAD, turns answered as the script says. */
class AgentSession {
  private readonly vad = new EnergyVad();
  private turns = 0;
  /** when the caller's last utterance ended (Date.now()), until a reply's audio starts; null: none */
  private utteranceEndAt: number | null = null;
  /** linear16 at 16 kHz both ways (Settings' audio.input), else µ-law at 8 kHz */
  private wide = false;
  private settings: Record<string, unknown> | null = null;
  active: { stop: () => void } | null = null;
  private readonly callNames = new Map<string, string>();

  constructor(
    private readonly ws: WebSocket,
    private readonly s: DeepgramAgentServer,
  ) {
    this.send({ type: 'Welcome', request_id: `req-${++seq}` });
    if (s.script.dropAfterMs !== undefined) setTimeout(() => ws.close(1011, 'internal error'), s.script.dropAfterMs);
  }

  private send(m: Record<string, unknown>): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(m));
  }

  /** The caller's audio, 20 ms frames to the VAD; refused before Settings. */
  audio(bytes: Buffer): void {
    if (!this.settings) return this.send({ type: 'Error', description: 'Audio was received before Settings.', code: 'UNPARSABLE_CLIENT_MESSAGE' });
    const wide = this.wide;
    const per = wide ? 640 : 160;
    for (let at = 0; at + per <= bytes.length; at += per) {
      const n = wide ? 320 : 160;
      const pcm = new Int16Array(n);
      for (let i = 0; i < n; i++) pcm[i] = wide ? bytes.readInt16LE(at + i * 2) : muLaw.decodeSample(bytes[at + i]!);
      this.s.appendedMs += 20;
      this.frame(pcm);
    }
  }

  onMessage(raw: string): void {
    const s = this.s;
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return this.send({ type: 'Error', description: 'The message could not be parsed.', code: 'UNPARSABLE_CLIENT_MESSAGE' });
    }
    const type = String(m.type);
    s.received.push({ at: Date.now(), type, message: m });
    switch (type) {
      case 'Settings':
        return this.applySettings(m);
      case 'InjectUserMessage':
        if (s.received.filter((r) => r.type === 'InjectUserMessage').length === 1) this.respond(s.script.greeting);
        return;
      case 'InjectAgentMessage':
        return this.respond({ say: String(m.message ?? ''), ms: 600, hz: 550 });
      case 'FunctionCallResponse': {
        const next = s.script.afterCall(this.callNames.get(String(m.id)) ?? String(m.name), String(m.content));
        if (next) this.respond(next);
        return;
      }
      case 'UpdatePrompt':
        return this.send({ type: 'PromptUpdated' });
    }
  }

  /** Settings: the audio format, SettingsApplied, and the agent's greeting if it has one. */
  private applySettings(m: Record<string, unknown>): void {
    this.settings = m;
    const input = (m.audio as { input?: { encoding?: string; sample_rate?: number } }).input;
    this.wide = input?.encoding === 'linear16' && input.sample_rate === 16000;
    this.send({ type: 'SettingsApplied' });
    const greeting = (m.agent as { greeting?: string }).greeting;
    if (greeting) {
      const g = this.s.script.greeting;
      this.respond('call' in g ? g : { ...g, say: greeting });
    }
  }

  private frame(pcm: Int16Array): void {
    const s = this.s;
    const v = this.vad.frame(pcm);
    if (v === 'start') {
      s.speechStartedAt.push(Date.now());
      this.active?.stop();
      this.send({ type: 'UserStartedSpeaking' });
    } else if (v === 'stop') {
      this.utteranceEndAt = Date.now() - this.vad.silenceMs;
      const t = s.script.turn(this.turns++);
      this.send({ type: 'ConversationText', role: 'user', content: t.heard });
      this.send({ type: 'AgentThinking', content: '' });
      this.respond(t.reply);
    }
  }

  private respond(reply: RealtimeReply): void {
    this.active?.stop();
    if ('call' in reply) {
      const id = `fc-${++seq}`;
      this.callNames.set(id, reply.call);
      this.send({ type: 'FunctionCallRequest', functions: [{ id, name: reply.call, arguments: JSON.stringify(reply.arguments), client_side: true }] });
      return;
    }
    this.speak(reply);
  }

  /** The reply's text, then after the vendor's latency its audio: a tone, 200 ms every 50 ms (four times real time), then AgentAudioDone. */
  private speak(reply: { say: string; ms: number; hz?: number }): void {
    const { s, ws } = this;
    const hz = reply.hz ?? 440;
    this.send({ type: 'ConversationText', role: 'assistant', content: reply.say });
    const handle = pacedAudio(s, reply.ms, {
      first: () => {
        const total = this.utteranceEndAt === null ? s.latencyMs : Date.now() - this.utteranceEndAt;
        this.utteranceEndAt = null;
        this.send({ type: 'AgentStartedSpeaking', total_latency: total / 1000, tts_latency: 0.05, ttt_latency: s.latencyMs / 1000 });
      },
      chunk: (ms, sent) => {
        const wide = this.wide;
        const pcm = pcmTone(ms, hz, wide ? 16000 : 8000, sent * (wide ? 16 : 8));
        if (wide) ws.send(pcm);
        else {
          const ul = Buffer.alloc(pcm.length / 2);
          for (let i = 0; i < ul.length; i++) ul[i] = muLaw.encodeSample(pcm.readInt16LE(i * 2));
          ws.send(ul);
        }
      },
      done: () => this.send({ type: 'AgentAudioDone' }),
      ended: () => {
        if (this.active === handle) this.active = null;
      },
    });
    this.active = handle;
  }
}
