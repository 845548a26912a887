/**
 * ai_talk with a speech-to-speech model (engine_model `openai-realtime.<model>`, docs/ai.md
 * "Speech-to-speech"): the call's audio goes to OpenAI's Realtime API over one WebSocket (the
 * official `openai` SDK's OpenAIRealtimeWS, through the egress policy), and the model's audio comes
 * back into the call as it arrives. µ-law 8 kHz both ways (the call's own format), the vendor's
 * server VAD decides the turns.
 *
 * - session.update: the AI's prompt (with its variables), voice, formats, server VAD, transcription
 *   and the platform's tools (the text path's definitions); then response.create: the agent speaks first.
 * - caller audio: an 'in' fork of the endpoint → input_audio_buffer.append (40 ms a message).
 * - model audio: response.output_audio.delta → an 'out' fork; what was injected and when is kept,
 *   so what has actually been played is known at any moment.
 * - barge-in: input_audio_buffer.speech_started while the model's audio still plays: the fork is
 *   dropped (queued audio with it) and conversation.item.truncate cuts the item at what was played.
 * - function calls (response.done): run by AiSession.callTool, answered with function_call_output,
 *   then response.create; a tool that ends the conversation ends it once the audio has played out.
 * - transcripts (the caller's, the model's) become aimessages, in the order they arrive.
 */
import { EventEmitter } from 'node:events';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import type { RealtimeClientEvent, RealtimeServerEvent, RealtimeSessionCreateRequest } from 'openai/resources/realtime/realtime';
import type { AudioFork, Endpoint } from '../../media-engine';
import type { AiSession } from '../../core/ai/session';
import type { EgressPolicy } from '../../core/net';
import type { ToolDef } from '../../core/llm/client';
import { netError } from '../voices/http-stream';
import { pcmToUlaw, ulawToPcm } from '../voices/pcm';
import type { VoiceEnd } from './voice';

export interface RealtimeOptions {
  /** the vendor's model (engine_model after `openai-realtime.`) */
  model: string;
  /** the SDK's base URL (…/v1); the SDK opens wss://…/realtime?model= */
  baseUrl: string;
  apiKey: string;
  /** the model's voice ('' = its default) */
  voice: string;
  /** BCP-47; the caller's transcription language */
  language: string;
  egress: EgressPolicy;
  /** extra CAs trusted for the WebSocket */
  ca?: Buffer | null;
  /** maximum session length, ms (0: none) */
  maxDurationMs?: number;
  /** silence that ends a caller turn (the server VAD's silence_duration_ms) */
  silenceMs?: number;
}

export interface RealtimeAgentEvents {
  /** the model's audio was cut by the caller: ms of it that had been played */
  barge_in: [playedMs: number];
  /** something went wrong that does not end the session */
  error: [err: Error];
}

const VENDOR = 'openai-realtime';
/** caller audio per append message, in 20 ms frames */
const FRAMES_PER_APPEND = 2;

/** The Realtime API's tool shape from the chat one. */
function realtimeTools(defs: ToolDef[]) {
  return defs.map((d) => ({ type: 'function' as const, name: d.function.name, description: d.function.description, parameters: d.function.parameters }));
}

/** What the ws client reports about a refused upgrade, said plainly (the body is not echoed). */
function connectError(e: Error): Error {
  const status = /Unexpected server response: (\d+)/.exec(e.message)?.[1];
  if (status === '401' || status === '403') return new Error(`${VENDOR}: the API key was refused (HTTP ${status})`);
  if (status) return new Error(`${VENDOR}: the connection was refused (HTTP ${status})`);
  return new Error(`${VENDOR}: the vendor could not be reached (${e.message})`);
}

export class RealtimeAgent extends EventEmitter<RealtimeAgentEvents> {
  private rt: OpenAIRealtimeWS | null = null;
  private inFork: AudioFork | null = null;
  private outFork: AudioFork | null = null;
  private opening: Promise<AudioFork> | null = null;
  private pending: Int16Array[] = [];
  /** the model's audio item now playing: its id, ms injected, and when the injected audio ends */
  private playing: { itemId: string; injectedMs: number } | null = null;
  private playEnd = 0;
  /** items cut by barge-in: their late deltas are dropped */
  private readonly cut = new Set<string>();
  /** aimessages and tool calls, in the order the events came */
  private chain: Promise<unknown> = Promise.resolve();
  private aiId: string;
  private finished = false;
  private timers: NodeJS.Timeout[] = [];
  private resolveEnd!: (e: VoiceEnd) => void;
  readonly done: Promise<VoiceEnd>;

  constructor(
    private readonly ep: Endpoint,
    private readonly session: AiSession,
    private readonly o: RealtimeOptions,
  ) {
    super();
    this.done = new Promise((r) => (this.resolveEnd = r));
    this.on('error', () => undefined);
    this.aiId = session.currentAi.id;
  }

  /** Connects (refused URL, refused key, unreachable vendor: throws), configures the session, greets. */
  async start(signal: AbortSignal): Promise<this> {
    if (!this.o.apiKey) throw new Error(`${VENDOR}: no API key: set the AI's engine_key or OPENAI_API_KEY on the server`);
    let checked;
    try {
      checked = await this.o.egress.checkDestination(new URL(this.o.baseUrl).hostname);
    } catch (e) {
      throw netError(VENDOR, e);
    }
    const client = new OpenAI({ apiKey: this.o.apiKey, baseURL: this.o.baseUrl });
    // ws hands these to the TLS connect: `lookup` pins the socket to the address the policy checked
    const wsOptions = { lookup: checked.lookup, handshakeTimeout: 10_000, ...(this.o.ca ? { ca: this.o.ca } : {}) };
    const rt = new OpenAIRealtimeWS({ model: this.o.model, options: wsOptions }, client);
    this.rt = rt;
    await new Promise<void>((resolve, reject) => {
      const onError = (e: Error) => reject(connectError(e));
      rt.on('error', onError);
      rt.socket.once('open', () => {
        rt.off('error', onError);
        resolve();
      });
      signal.addEventListener('abort', () => reject(new Error(`${VENDOR}: cancelled`)), { once: true });
    }).catch((e: Error) => {
      rt.socket.terminate();
      throw e;
    });
    rt.on('error', (e) => this.emit('error', e));
    rt.on('event', (ev) => this.onEvent(ev));
    rt.socket.on('close', (code) => this.finish({ kind: 'error', message: `${VENDOR}: the vendor closed the connection (${code})` }));
    this.send({ type: 'session.update', session: this.sessionConfig() });
    this.inFork = await this.ep.forkAudioStart({ mix: 'in', maxInFlight: 50, onFrame: (f) => this.onFrame(f) });
    const onAbort = () => this.finish({ kind: 'aborted' });
    signal.addEventListener('abort', onAbort, { once: true });
    this.ep.once('destroy', () => this.finish({ kind: 'hangup' }));
    if (this.o.maxDurationMs && this.o.maxDurationMs > 0) this.timers.push(setTimeout(() => this.finish({ kind: 'duration' }), this.o.maxDurationMs));
    void this.done.then(() => signal.removeEventListener('abort', onAbort));
    // the agent speaks first
    this.send({ type: 'response.create' });
    return this;
  }

  private sessionConfig(): RealtimeSessionCreateRequest {
    const { instructions, tools } = this.session.realtimeSetup();
    return {
      type: 'realtime',
      instructions,
      output_modalities: ['audio'],
      audio: {
        input: {
          format: { type: 'audio/pcmu' },
          transcription: { model: 'whisper-1', language: this.o.language.slice(0, 2).toLowerCase() },
          turn_detection: { type: 'server_vad', silence_duration_ms: this.o.silenceMs ?? 500, create_response: true, interrupt_response: true },
        },
        output: { format: { type: 'audio/pcmu' }, ...(this.o.voice ? { voice: this.o.voice } : {}) },
      },
      tools: realtimeTools(tools),
      tool_choice: 'auto',
    };
  }

  private send(e: RealtimeClientEvent): void {
    if (!this.finished && this.rt) this.rt.send(e);
  }

  private onFrame(frame: Int16Array): void {
    if (this.finished) return;
    this.pending.push(frame);
    if (this.pending.length < FRAMES_PER_APPEND) return;
    const n = this.pending.reduce((a, f) => a + f.length, 0);
    const pcm = new Int16Array(n);
    let at = 0;
    for (const f of this.pending) {
      pcm.set(f, at);
      at += f.length;
    }
    this.pending = [];
    this.send({ type: 'input_audio_buffer.append', audio: pcmToUlaw(pcm).toString('base64') });
  }

  private onEvent(ev: RealtimeServerEvent): void {
    if (this.finished) return;
    switch (ev.type) {
      case 'response.output_audio.delta':
        return void this.play(ev.item_id, ev.delta);
      case 'input_audio_buffer.speech_started':
        return this.bargeIn();
      case 'conversation.item.input_audio_transcription.completed':
        if (ev.transcript.trim()) this.then(() => this.session.recordSpoken('user', ev.transcript.trim()));
        return;
      case 'response.output_audio_transcript.done':
        if (ev.transcript.trim()) this.then(() => this.session.recordSpoken('assistant', ev.transcript.trim()));
        return;
      case 'response.done': {
        const calls = (ev.response.output ?? []).flatMap((i) => (i.type === 'function_call' && i.call_id && i.name ? [{ callId: i.call_id, name: i.name, args: i.arguments ?? '' }] : []));
        if (calls.length) this.then(() => this.runTools(calls));
        return;
      }
      case 'error':
        // a refused session (bad key, unknown model) ends it; anything else is reported and the talk goes on
        // (the vendor's own text is not echoed for a key: it may quote part of it)
        if (ev.error.code === 'invalid_api_key') return this.finish({ kind: 'error', message: `${VENDOR}: the API key was refused` });
        if (ev.error.code === 'model_not_found') return this.finish({ kind: 'error', message: `${VENDOR}: the model ${this.o.model} was not found` });
        this.emit('error', new Error(`${VENDOR}: ${ev.error.message}`));
        return;
    }
  }

  /** In the order of the events: messages are stored one after the other. */
  private then(fn: () => Promise<unknown>): void {
    this.chain = this.chain.then(fn).catch((e: Error) => this.emit('error', e));
  }

  private async out(): Promise<AudioFork> {
    if (this.outFork) return this.outFork;
    this.opening ??= this.ep.forkAudioStart({ mix: 'out', onFrame: () => undefined, maxInFlight: 50 }).then((f) => (this.outFork = f));
    return this.opening;
  }

  private async play(itemId: string, b64: string): Promise<void> {
    if (this.cut.has(itemId)) return;
    const pcm = ulawToPcm(Buffer.from(b64, 'base64'));
    if (!pcm.length) return;
    const fork = await this.out();
    if (this.finished || this.cut.has(itemId)) return;
    const now = Date.now();
    if (this.playing?.itemId !== itemId) this.playing = { itemId, injectedMs: 0 };
    fork.inject(pcm);
    const ms = pcm.length / 8;
    this.playing.injectedMs += ms;
    this.playEnd = Math.max(this.playEnd, now) + ms;
  }

  /** ms of the playing item that have gone out to the caller. */
  private playedMs(): number {
    if (!this.playing) return 0;
    return Math.max(0, Math.round(this.playing.injectedMs - Math.max(0, this.playEnd - Date.now())));
  }

  /** The caller spoke: the model's audio still queued is dropped and its item cut at what was heard. */
  private bargeIn(): void {
    const item = this.playing;
    if (!item || this.playEnd <= Date.now()) return;
    const played = this.playedMs();
    this.silence();
    this.cut.add(item.itemId);
    this.send({ type: 'conversation.item.truncate', item_id: item.itemId, content_index: 0, audio_end_ms: played });
    this.emit('barge_in', played);
  }

  /** Drops the 'out' fork and what it still had queued. */
  private silence(): void {
    this.playing = null;
    this.playEnd = 0;
    const f = this.outFork;
    this.outFork = null;
    this.opening = null;
    void f?.stop().catch(() => undefined);
  }

  private async runTools(calls: { callId: string; name: string; args: string }[]): Promise<void> {
    for (const c of calls) {
      const output = await this.session.callTool({ id: c.callId, type: 'function', function: { name: c.name, arguments: c.args } });
      this.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: c.callId, output } });
    }
    const end = this.session.endRequest;
    if (end) {
      // what the model said before the call (a goodbye) plays out first
      const left = this.playEnd - Date.now();
      if (left > 0) await new Promise((r) => setTimeout(r, left));
      return this.finish(end);
    }
    // a team hand-off: the next member's prompt and tools
    if (this.session.currentAi.id !== this.aiId) {
      this.aiId = this.session.currentAi.id;
      const { instructions, tools } = this.session.realtimeSetup();
      this.send({ type: 'session.update', session: { type: 'realtime', instructions, tools: realtimeTools(tools) } });
    }
    this.send({ type: 'response.create' });
  }

  private finish(e: VoiceEnd): void {
    if (this.finished) return;
    this.finished = true;
    for (const t of this.timers) clearTimeout(t);
    void this.inFork?.stop().catch(() => undefined);
    if (e.kind !== 'hangup') this.silence();
    try {
      this.rt?.close({ code: 1000, reason: 'done' });
    } catch {
      // already closed
    }
    // the messages still being stored are part of the end
    void this.chain.finally(() => this.resolveEnd(e));
  }

  /** Stops the model's speech (the stop_media tool). */
  async stopMedia(): Promise<void> {
    const item = this.playing;
    const played = this.playedMs();
    this.silence();
    if (item) {
      this.cut.add(item.itemId);
      this.send({ type: 'conversation.item.truncate', item_id: item.itemId, content_index: 0, audio_end_ms: played });
    }
  }
}
