// A stand-in for OpenAI's Realtime API on loopback (wss, a self-signed certificate: the SDK always
// opens wss), written from the public API reference: GET /v1/realtime?model= with
// `Authorization: Bearer <key>` (another key: HTTP 401 on the upgrade), session.update →
// session.updated, input_audio_buffer.append (µ-law; speech found by its energy → speech_started /
// speech_stopped, then a response as the server VAD's create_response does), response.create → a
// response: a tone or given speech as response.output_audio.delta (µ-law base64, sent faster than real
// time as the vendor does) with its transcript, or a function call; after a function_call_output item
// the script's next response, after a user message item (content input_text, as a client's text turn)
// the script's answer to its text; conversation.item.retrieve → the item (conversation.item.retrieved)
// or an item_not_found error; conversation.item.truncate → conversation.item.truncated. It speaks
// G.711 µ-law only: a session.update asking another audio format (GA `{type: 'audio/pcm'}`, beta
// `pcm16`) gets an error event naming it, never audio it would misread. What the client sent is kept
// for the test.
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { muLaw } from '../../media-engine';
import { selfSignedCert, type TestCert } from '../tls-cert';

/** One response of the model: audio (a tone of `ms`) with its transcript, or a function call (what every realtime stand-in speaks). */
export type RealtimeReply = { say: string; ms: number; hz?: number } | { call: string; arguments: Record<string, unknown> };
/** A response of this stand-in's only: `speech` (8 kHz samples, e.g. espeak-ng's) with its transcript. */
export type SpeechReply = { say: string; speech: Int16Array };

/** What the model answers; `R`: the replies a stand-in speaks (this one also `SpeechReply`). */
export interface RealtimeScript<R = RealtimeReply> {
  /** the opening response (the client's first response.create) */
  greeting: R;
  /** the caller's n-th utterance (0-based): what it "said" (its transcript) and the model's answer */
  turn(n: number): { heard: string; reply: R };
  /** after a function call's output: the model's next response */
  afterCall(name: string, output: string): R | null;
  /** after a user message of text (conversation.item.create, then response.create): the model's answer; absent: none */
  text?(text: string): R | null;
  /** the vendor drops the connection this long after it opened (code 1011) */
  dropAfterMs?: number;
}

/** A script that says nothing, at once: a stand-in whose script each test sets, or one only connected to. */
export const SILENT_SCRIPT: RealtimeScript = { greeting: { say: '', ms: 0 }, turn: () => ({ heard: '', reply: { say: '', ms: 0 } }), afterCall: () => null };

export interface ReceivedEvent {
  at: number;
  type: string;
  event: Record<string, unknown>;
}

export interface RealtimeServer {
  url: string;
  cert: TestCert;
  key: string;
  script: RealtimeScript<RealtimeReply | SpeechReply>;
  /** every client event but appends, as received */
  received: ReceivedEvent[];
  /** when each speech_started was sent, and when each response's first audio went out */
  speechStartedAt: number[];
  firstAudioAt: Record<string, number>;
  /** ms of caller audio received */
  appendedMs: number;
  /** of which decoded (as µ-law) to speech-like energy */
  voicedMs: number;
  /** the VAD's verdicts at the audio's time: `+ms` speech started, `-ms` stopped (appendedMs) */
  vadAt: string[];
  /** input_audio_buffer.append events by the byte length of their audio */
  appendSizes: Map<number, number>;
  /** upgrades refused for their key */
  refused: number;
  /** client connections closed so far */
  closedSessions: number;
  /** resolves once `n` client connections have closed (counted from the start) */
  whenClosed(n: number): Promise<void>;
  /** closes the server and removes its certificate's folder */
  close(): Promise<void>;
}

/** `ms` of the reply's audio from sample `from`, as µ-law base64: its speech, or a tone. */
const b64Audio = (reply: { ms: number; hz?: number } | SpeechReply, ms: number, from: number): string => {
  const n = ms * 8;
  const out = Buffer.alloc(n);
  const hz = 'hz' in reply ? (reply.hz ?? 440) : 440;
  const sample = 'speech' in reply ? (i: number) => reply.speech[i] ?? 0 : (i: number) => Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / 8000));
  for (let i = 0; i < n; i++) out[i] = muLaw.encodeSample(sample(from + i));
  return out.toString('base64');
};

/** An audio format of a session.update (GA `{type}` or a beta name) other than G.711 µ-law, or null. */
function notMulaw(format: unknown): string | null {
  if (format === undefined) return null;
  const name = typeof format === 'string' ? format : String((format as { type?: unknown } | null)?.type);
  return name === 'audio/pcmu' || name === 'g711_ulaw' ? null : name;
}

let seq = 0;
const id = (p: string) => `${p}_${++seq}`;

/** `port`: where to listen on 127.0.0.1 (default any free one the kernel gives; the soak takes its shard's). */
export async function startRealtimeServer(key: string, script: RealtimeScript<RealtimeReply | SpeechReply>, port = 0): Promise<RealtimeServer> {
  const cert = selfSignedCert();
  const http = https.createServer({ cert: cert.cert, key: cert.key });
  const wss = new WebSocketServer({ noServer: true });
  const closeWaiters = new Set<() => void>();
  const state: RealtimeServer = {
    url: '',
    cert,
    key,
    script,
    received: [],
    speechStartedAt: [],
    firstAudioAt: {},
    appendedMs: 0,
    voicedMs: 0,
    vadAt: [],
    appendSizes: new Map(),
    refused: 0,
    closedSessions: 0,
    whenClosed: (n) =>
      new Promise<void>((r) => {
        const check = () => (state.closedSessions >= n ? (closeWaiters.delete(check), r()) : undefined);
        closeWaiters.add(check);
        check();
      }),
    async close() {
      for (const c of wss.clients) c.terminate();
      wss.close();
      await new Promise<void>((r) => http.close(() => r()));
      fs.rmSync(cert.dir, { recursive: true, force: true });
    },
  };
  http.on('upgrade', (req, socket, head) => {
    const u = new URL(req.url ?? '/', 'https://x');
    if (u.pathname !== '/v1/realtime' || !u.searchParams.get('model')) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    if (req.headers.authorization !== `Bearer ${state.key}`) {
      state.refused++;
      socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      session(ws, state);
      ws.on('close', () => {
        state.closedSessions++;
        for (const w of [...closeWaiters]) w();
      });
    });
  });
  await new Promise<void>((r) => http.listen(port, '127.0.0.1', () => r()));
  state.url = `https://127.0.0.1:${(http.address() as AddressInfo).port}/v1`;
  return state;
}

/** One client connection: the conversation's state and the VAD. */
function session(ws: WebSocket, s: RealtimeServer): void {
  const conv = new Conversation(ws, s);
  ws.on('message', (raw) => conv.onMessage(String(raw)));
  ws.on('close', () => conv.active?.stop());
}

type Send = (e: Record<string, unknown>) => void;
/** An item a client adds: a function call's output or a message. */
type Item = { type?: string; role?: string; output?: string; call_id?: string; content?: { type?: string; text?: unknown }[] };

class Conversation {
  readonly send: Send;
  private silenceMs = 500;
  private readonly vad = { speaking: false, voicedRun: 0, quietRun: 0 };
  private turns = 0;
  /** response.create events of this connection: its first one asks for the greeting */
  private asked = 0;
  /** the response now streaming: cancelled by the caller's speech */
  active: { id: string; stop: () => void } | null = null;
  private readonly callNames = new Map<string, string>();
  /** the conversation's items, for conversation.item.retrieve */
  private readonly items = new Map<string, Record<string, unknown>>();
  /** the item the client added last (conversation.item.create), not yet answered by a response */
  private lastItem: Item | null = null;

  constructor(
    ws: WebSocket,
    private readonly s: RealtimeServer,
  ) {
    this.send = (e) => ws.readyState === ws.OPEN && ws.send(JSON.stringify({ event_id: id('event'), ...e }));
    this.send({ type: 'session.created', session: { type: 'realtime', id: id('sess') } });
    if (s.script.dropAfterMs !== undefined) setTimeout(() => ws.close(1011, 'server error'), s.script.dropAfterMs);
  }

  onMessage(raw: string): void {
    let e: Record<string, unknown>;
    try {
      e = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return this.send({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_json', message: 'not JSON' } });
    }
    const type = String(e.type);
    if (type !== 'input_audio_buffer.append') this.s.received.push({ at: Date.now(), type, event: e });
    switch (type) {
      case 'session.update':
        return this.sessionUpdate(e);
      case 'input_audio_buffer.append':
        return this.append(Buffer.from(String(e.audio), 'base64'));
      case 'response.create':
        return this.responseCreate();
      case 'conversation.item.retrieve': {
        const item = this.items.get(String(e.item_id));
        if (item) return this.send({ type: 'conversation.item.retrieved', item });
        return this.send({
          type: 'error',
          error: { type: 'invalid_request_error', code: 'item_not_found', message: `Item with item_id not found: ${String(e.item_id)}`, param: 'item_id', event_id: e.event_id ?? null },
        });
      }
      case 'conversation.item.create':
        this.lastItem = (e.item ?? null) as Item | null;
        return;
      case 'conversation.item.truncate':
        return this.send({ type: 'conversation.item.truncated', item_id: e.item_id, content_index: e.content_index, audio_end_ms: e.audio_end_ms });
    }
  }

  /** The session's turn silence taken; an audio format other than µ-law refused with an error event (the session left as it was). */
  private sessionUpdate(e: Record<string, unknown>): void {
    const session = (e.session ?? {}) as {
      audio?: { input?: { format?: unknown; turn_detection?: { silence_duration_ms?: number } }; output?: { format?: unknown } };
      input_audio_format?: unknown;
      output_audio_format?: unknown;
    };
    const asked: [string, unknown][] = [
      ['session.audio.input.format', session.audio?.input?.format],
      ['session.audio.output.format', session.audio?.output?.format],
      ['session.input_audio_format', session.input_audio_format],
      ['session.output_audio_format', session.output_audio_format],
    ];
    for (const [param, format] of asked) {
      const other = notMulaw(format);
      if (other === null) continue;
      const message = `this stand-in speaks G.711 µ-law only (audio/pcmu): ${param} ${other} is not supported`;
      return this.send({ type: 'error', error: { type: 'invalid_request_error', code: 'unsupported_audio_format', message, param, event_id: e.event_id ?? null } });
    }
    const td = session.audio?.input?.turn_detection;
    if (typeof td?.silence_duration_ms === 'number') this.silenceMs = td.silence_duration_ms;
    this.send({ type: 'session.updated', session: e.session });
  }

  /** Caller audio (µ-law), 20 ms frames to the VAD. */
  private append(bytes: Buffer): void {
    const s = this.s;
    s.appendSizes.set(bytes.length, (s.appendSizes.get(bytes.length) ?? 0) + 1);
    for (let at = 0; at + 160 <= bytes.length; at += 160) {
      const pcm = new Int16Array(160);
      for (let i = 0; i < 160; i++) pcm[i] = muLaw.decodeSample(bytes[at + i]!);
      s.appendedMs += 20;
      this.frame(pcm);
    }
  }

  /**
   * The client asks for a response: the greeting first, then the model's answer to the item the client
   * added last (a function call's output, a user message's text), each item answered once.
   */
  private responseCreate(): void {
    const { script } = this.s;
    const last = this.lastItem;
    this.lastItem = null;
    // per connection: each session (each call) opens with the greeting
    if (++this.asked === 1) return this.respond(script.greeting);
    let next: RealtimeReply | SpeechReply | null = null;
    if (last?.type === 'function_call_output') next = script.afterCall(this.callNames.get(String(last.call_id)) ?? '', String(last.output));
    if (last?.type === 'message' && last.role === 'user') {
      const text = (last.content ?? []).flatMap((c) => (c.type === 'input_text' && typeof c.text === 'string' ? [c.text] : [])).join(' ');
      next = script.text?.(text) ?? null;
    }
    if (next) this.respond(next);
  }

  /** The server VAD on one 20 ms frame: 60 ms voiced starts speech (cutting the response), `silenceMs` quiet ends the turn. */
  private frame(pcm: Int16Array): void {
    const { s, vad } = this;
    let sum = 0;
    for (const v of pcm) sum += v * v;
    const voiced = Math.sqrt(sum / pcm.length) > 600;
    if (voiced) {
      s.voicedMs += 20;
      vad.voicedRun += 20;
      vad.quietRun = 0;
    } else {
      vad.quietRun += 20;
      vad.voicedRun = 0;
    }
    if (!vad.speaking && vad.voicedRun >= 60) {
      vad.speaking = true;
      s.speechStartedAt.push(Date.now());
      s.vadAt.push(`+${s.appendedMs - vad.voicedRun}`);
      this.send({ type: 'input_audio_buffer.speech_started', audio_start_ms: s.appendedMs - vad.voicedRun, item_id: id('item') });
      // interrupt_response: the caller's speech cancels the response being streamed
      this.active?.stop();
    } else if (vad.speaking && vad.quietRun >= this.silenceMs) {
      vad.speaking = false;
      s.vadAt.push(`-${s.appendedMs}`);
      this.endTurn();
    }
  }

  /** The caller's turn ended: its item and transcript, then the model's reply (create_response). */
  private endTurn(): void {
    const s = this.s;
    const userItem = id('item');
    this.send({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: s.appendedMs, item_id: userItem });
    this.send({ type: 'input_audio_buffer.committed', item_id: userItem, previous_item_id: null });
    const t = s.script.turn(this.turns++);
    this.items.set(userItem, { id: userItem, type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_audio', transcript: t.heard }] });
    this.send({ type: 'conversation.item.input_audio_transcription.completed', item_id: userItem, content_index: 0, transcript: t.heard });
    this.respond(t.reply);
  }

  private respond(reply: RealtimeReply | SpeechReply): void {
    this.active?.stop();
    const rid = id('resp');
    const itemId = id('item');
    this.send({ type: 'response.created', response: { id: rid, status: 'in_progress', output: [] } });
    if ('call' in reply) this.callResponse(rid, itemId, reply);
    else this.audioResponse(rid, itemId, reply);
  }

  /** A function call, whole at once. */
  private callResponse(rid: string, itemId: string, reply: { call: string; arguments: Record<string, unknown> }): void {
    const send = this.send;
    const callId = id('call');
    const args = JSON.stringify(reply.arguments);
    this.callNames.set(callId, reply.call);
    const item = { id: itemId, type: 'function_call', status: 'completed', name: reply.call, call_id: callId, arguments: args };
    send({ type: 'response.output_item.added', response_id: rid, output_index: 0, item: { ...item, status: 'in_progress', arguments: '' } });
    send({ type: 'response.function_call_arguments.done', response_id: rid, item_id: itemId, output_index: 0, call_id: callId, name: reply.call, arguments: args });
    send({ type: 'response.output_item.done', response_id: rid, output_index: 0, item });
    send({ type: 'response.done', response: { id: rid, status: 'completed', output: [item] } });
  }

  /** Audio with its transcript: 200 ms every 50 ms (four times real time, as a vendor sends ahead of the playback) until done or cancelled. */
  private audioResponse(rid: string, itemId: string, reply: { say: string; ms: number; hz?: number } | SpeechReply): void {
    const { send, s } = this;
    const item = { id: itemId, type: 'message', role: 'assistant', status: 'in_progress', content: [] };
    send({ type: 'response.output_item.added', response_id: rid, output_index: 0, item });
    send({ type: 'conversation.item.added', item });
    let sent = 0;
    const total = 'speech' in reply ? Math.ceil(reply.speech.length / 8) : reply.ms;
    const timer = setInterval(() => {
      if (sent >= total) return done('completed');
      const ms = Math.min(200, total - sent);
      if (!sent) s.firstAudioAt[itemId] = Date.now();
      send({ type: 'response.output_audio.delta', response_id: rid, item_id: itemId, output_index: 0, content_index: 0, delta: b64Audio(reply, ms, sent * 8) });
      sent += ms;
    }, 50);
    const done = (status: 'completed' | 'cancelled') => {
      clearInterval(timer);
      if (this.active?.id === rid) this.active = null;
      send({ type: 'response.output_audio.done', response_id: rid, item_id: itemId, output_index: 0, content_index: 0 });
      send({ type: 'response.output_audio_transcript.done', response_id: rid, item_id: itemId, output_index: 0, content_index: 0, transcript: reply.say });
      const finished = { ...item, status: 'completed', content: [{ type: 'output_audio', transcript: reply.say }] };
      this.items.set(itemId, finished);
      send({ type: 'response.output_item.done', response_id: rid, output_index: 0, item: finished });
      send({ type: 'response.done', response: { id: rid, status, output: [finished] } });
    };
    this.active = { id: rid, stop: () => done('cancelled') };
  }
}
