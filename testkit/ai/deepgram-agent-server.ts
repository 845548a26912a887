// A stand-in for Deepgram's Voice Agent API on loopback (plain ws), written from the public API
// reference and the @deepgram/sdk source: GET /v1/agent/converse with `Authorization: Token <key>`
// (or the `token, <key>` subprotocol; another key: HTTP 401 on the upgrade). Welcome, then Settings →
// SettingsApplied (audio in/out mulaw 8000 or linear16 16000 as the Settings say; a greeting is spoken
// at once); binary caller audio (speech found by its energy → UserStartedSpeaking, cutting the
// response being spoken; its end → ConversationText user, AgentThinking, a response);
// InjectUserMessage / InjectAgentMessage → a response; FunctionCallResponse → the agent's next response;
// UpdatePrompt → PromptUpdated. A response is ConversationText assistant, AgentStartedSpeaking, a
// tone as binary audio (faster than real time), AgentAudioDone; or a FunctionCallRequest. What the
// client sent is kept.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { muLaw } from '../../media-engine';
import type { RealtimeReply, RealtimeScript } from './realtime-server';
import { EnergyVad, pcmTone } from './energy-vad';

export interface DeepgramReceived {
  at: number;
  type: string;
  message: Record<string, unknown>;
}

export interface DeepgramAgentServer {
  /** the base URL (DEEPGRAM_AGENT_BASE_URL) */
  url: string;
  key: string;
  script: RealtimeScript;
  /** ms before each response's first audio */
  latencyMs: number;
  /** every JSON message of the client, as received */
  received: DeepgramReceived[];
  /** the Authorization header of the last accepted connection */
  authorization: string;
  speechStartedAt: number[];
  firstAudioAt: number[];
  /** ms of caller audio received */
  appendedMs: number;
  refused: number;
  close(): Promise<void>;
}

let seq = 0;

export async function startDeepgramAgentServer(key: string, script: RealtimeScript): Promise<DeepgramAgentServer> {
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (p) => (p.has('token') ? 'token' : false) });
  const state: DeepgramAgentServer = {
    url: '',
    key,
    script,
    latencyMs: 0,
    received: [],
    authorization: '',
    speechStartedAt: [],
    firstAudioAt: [],
    appendedMs: 0,
    refused: 0,
    async close() {
      for (const c of wss.clients) c.terminate();
      wss.close();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  server.on('upgrade', (req, socket, head) => {
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
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  state.url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

function session(ws: WebSocket, s: DeepgramAgentServer): void {
  const send = (m: Record<string, unknown>) => ws.readyState === ws.OPEN && ws.send(JSON.stringify(m));
  const vad = new EnergyVad();
  let turns = 0;
  let wide = false;
  let settings: Record<string, unknown> | null = null;
  let active: { stop: () => void } | null = null;
  const callNames = new Map<string, string>();
  send({ type: 'Welcome', request_id: `req-${++seq}` });
  if (s.script.dropAfterMs !== undefined) setTimeout(() => ws.close(1011, 'internal error'), s.script.dropAfterMs);

  const respond = (reply: RealtimeReply) => {
    active?.stop();
    if ('call' in reply) {
      const id = `fc-${++seq}`;
      callNames.set(id, reply.call);
      send({ type: 'FunctionCallRequest', functions: [{ id, name: reply.call, arguments: JSON.stringify(reply.arguments), client_side: true }] });
      return;
    }
    const hz = reply.hz ?? 440;
    let sent = 0;
    let timer: NodeJS.Timeout | null = null;
    send({ type: 'ConversationText', role: 'assistant', content: reply.say });
    const start = setTimeout(() => {
      s.firstAudioAt.push(Date.now());
      send({ type: 'AgentStartedSpeaking', total_latency: s.latencyMs / 1000, tts_latency: 0.05, ttt_latency: s.latencyMs / 1000 });
      timer = setInterval(() => {
        if (sent >= reply.ms) {
          stop();
          send({ type: 'AgentAudioDone' });
          return;
        }
        // 200 ms of audio every 50 ms: four times real time
        const ms = Math.min(200, reply.ms - sent);
        const pcm = pcmTone(ms, hz, wide ? 16000 : 8000, sent * (wide ? 16 : 8));
        if (wide) ws.send(pcm);
        else {
          const ul = Buffer.alloc(pcm.length / 2);
          for (let i = 0; i < ul.length; i++) ul[i] = muLaw.encodeSample(pcm.readInt16LE(i * 2));
          ws.send(ul);
        }
        sent += ms;
      }, 50);
    }, s.latencyMs);
    const stop = () => {
      clearTimeout(start);
      if (timer) clearInterval(timer);
      if (active === handle) active = null;
    };
    const handle = { stop };
    active = handle;
  };

  const frame = (pcm: Int16Array) => {
    const v = vad.frame(pcm);
    if (v === 'start') {
      s.speechStartedAt.push(Date.now());
      active?.stop();
      send({ type: 'UserStartedSpeaking' });
    } else if (v === 'stop') {
      const t = s.script.turn(turns++);
      send({ type: 'ConversationText', role: 'user', content: t.heard });
      send({ type: 'AgentThinking', content: '' });
      respond(t.reply);
    }
  };

  ws.on('message', (raw, isBinary) => {
    if (isBinary) {
      if (!settings) return send({ type: 'Error', description: 'Audio was received before Settings.', code: 'UNPARSABLE_CLIENT_MESSAGE' });
      const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(raw as ArrayBuffer);
      const per = wide ? 640 : 160;
      for (let at = 0; at + per <= bytes.length; at += per) {
        const n = wide ? 320 : 160;
        const pcm = new Int16Array(n);
        for (let i = 0; i < n; i++) pcm[i] = wide ? bytes.readInt16LE(at + i * 2) : muLaw.decodeSample(bytes[at + i]!);
        s.appendedMs += 20;
        frame(pcm);
      }
      return;
    }
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(String(raw)) as Record<string, unknown>;
    } catch {
      return send({ type: 'Error', description: 'The message could not be parsed.', code: 'UNPARSABLE_CLIENT_MESSAGE' });
    }
    const type = String(m.type);
    s.received.push({ at: Date.now(), type, message: m });
    switch (type) {
      case 'Settings': {
        settings = m;
        const input = (m.audio as { input?: { encoding?: string; sample_rate?: number } }).input;
        wide = input?.encoding === 'linear16' && input.sample_rate === 16000;
        send({ type: 'SettingsApplied' });
        const greeting = (m.agent as { greeting?: string }).greeting;
        if (greeting) {
          const g = s.script.greeting;
          respond('call' in g ? g : { ...g, say: greeting });
        }
        return;
      }
      case 'InjectUserMessage':
        if (s.received.filter((r) => r.type === 'InjectUserMessage').length === 1) respond(s.script.greeting);
        return;
      case 'InjectAgentMessage':
        return respond({ say: String(m.message ?? ''), ms: 600, hz: 550 });
      case 'FunctionCallResponse': {
        const next = s.script.afterCall(callNames.get(String(m.id)) ?? String(m.name), String(m.content));
        if (next) respond(next);
        return;
      }
      case 'UpdatePrompt':
        return send({ type: 'PromptUpdated' });
    }
  });
  ws.on('close', () => active?.stop());
}
