/**
 * OpenAI's Realtime API (engine_model `openai-realtime.<model>`) through the official `openai`
 * SDK's OpenAIRealtimeWS, its socket pinned to the address the egress policy checked. µ-law 8 kHz
 * both ways (the call's own format); the vendor's server VAD decides the turns and cuts its own
 * response on the caller's speech.
 *
 * - session.update: instructions, voice, formats, server VAD, caller transcription, tools.
 * - greeting: response.create right after the session.
 * - caller audio: input_audio_buffer.append; model audio: response.output_audio.delta.
 * - barge-in: input_audio_buffer.speech_started → (host) conversation.item.truncate at what was played.
 * - the caller's turn ended: input_audio_buffer.speech_stopped (its audio_end_ms less the VAD's silence).
 * - function calls (response.done) → function_call_output, then response.create.
 */
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import type { RealtimeClientEvent, RealtimeServerEvent, RealtimeSessionCreateRequest } from 'openai/resources/realtime/realtime';
import type { ToolDef } from '../../../core/llm/client';
import { netError } from '../../voices/http-stream';
import { pcmToUlaw, ulawToPcm } from '../../voices/pcm';
import { upgradeError, type LinkHost, type LinkOptions, type LinkRate, type LinkSetup, type LinkToolResult, type ModelLink } from './link';

const VENDOR = 'openai-realtime';

/** The Realtime API's tool shape from the chat one. */
function realtimeTools(defs: ToolDef[]) {
  return defs.map((d) => ({ type: 'function' as const, name: d.function.name, description: d.function.description, parameters: d.function.parameters }));
}

export class OpenAiRealtimeLink implements ModelLink {
  readonly vendor = VENDOR;
  readonly legRate = false;
  private rt: OpenAIRealtimeWS | null = null;
  private closed = false;

  constructor(private readonly o: LinkOptions) {}

  async connect(_rate: LinkRate, setup: LinkSetup, host: LinkHost, signal: AbortSignal): Promise<void> {
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
    // removed once connected: the flow's action signal (AbortSignal.any) is held by Node while it has an
    // abort listener, and this one would hold the link, its socket and with them the whole call for good
    let onAbort = () => undefined as void;
    await new Promise<void>((resolve, reject) => {
      const onError = (e: Error) => reject(upgradeError(VENDOR, e));
      rt.on('error', onError);
      rt.socket.once('open', () => {
        rt.off('error', onError);
        resolve();
      });
      onAbort = () => reject(new Error(`${VENDOR}: cancelled`));
      signal.addEventListener('abort', onAbort, { once: true });
    })
      .catch((e: Error) => {
        rt.socket.terminate();
        throw e;
      })
      .finally(() => signal.removeEventListener('abort', onAbort));
    rt.on('error', (e) => host.warn(e));
    rt.on('event', (ev) => this.onEvent(ev, host));
    rt.socket.on('close', (code) => host.fail(`${VENDOR}: the vendor closed the connection (${code})`));
    this.send({ type: 'session.update', session: this.sessionConfig(setup) });
  }

  private sessionConfig(setup: LinkSetup): RealtimeSessionCreateRequest {
    return {
      type: 'realtime',
      instructions: setup.instructions,
      output_modalities: ['audio'],
      audio: {
        input: {
          format: { type: 'audio/pcmu' },
          transcription: { model: 'whisper-1', language: this.o.language.slice(0, 2).toLowerCase() },
          turn_detection: { type: 'server_vad', silence_duration_ms: this.o.silenceMs ?? 500, create_response: true, interrupt_response: true },
        },
        output: { format: { type: 'audio/pcmu' }, ...(this.o.voice ? { voice: this.o.voice } : {}) },
      },
      tools: realtimeTools(setup.tools),
      tool_choice: 'auto',
    };
  }

  private send(e: RealtimeClientEvent): void {
    if (!this.closed && this.rt) this.rt.send(e);
  }

  sendAudio(pcm: Int16Array): void {
    this.send({ type: 'input_audio_buffer.append', audio: pcmToUlaw(pcm).toString('base64') });
  }

  greet(): void {
    this.send({ type: 'response.create' });
  }

  truncate(item: string, playedMs: number): void {
    this.send({ type: 'conversation.item.truncate', item_id: item, content_index: 0, audio_end_ms: playedMs });
  }

  toolResults(results: LinkToolResult[], next: { setup: LinkSetup; handoff: boolean } | null): void {
    for (const r of results) this.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: r.callId, output: r.output } });
    if (!next) return;
    // a team hand-off: the next member's prompt and tools on the same connection
    if (next.handoff) this.send({ type: 'session.update', session: { type: 'realtime', instructions: next.setup.instructions, tools: realtimeTools(next.setup.tools) } });
    this.send({ type: 'response.create' });
  }

  private onEvent(ev: RealtimeServerEvent, host: LinkHost): void {
    if (this.closed) return;
    switch (ev.type) {
      case 'response.output_audio.delta': {
        const pcm = ulawToPcm(Buffer.from(ev.delta, 'base64'));
        if (pcm.length) host.audio(ev.item_id, pcm, 8000);
        return;
      }
      case 'input_audio_buffer.speech_started':
        return host.callerSpeaking();
      case 'input_audio_buffer.speech_stopped':
        // audio_end_ms is where the server VAD stopped: after its silence_duration_ms of silence
        return host.callerStopped(Math.max(0, ev.audio_end_ms - (this.o.silenceMs ?? 500)));
      case 'conversation.item.input_audio_transcription.completed':
        if (ev.transcript.trim()) host.heard(ev.transcript.trim());
        return;
      case 'response.output_audio_transcript.done':
        if (ev.transcript.trim()) host.said(ev.transcript.trim(), ev.item_id);
        return;
      case 'response.done': {
        const calls = (ev.response.output ?? []).flatMap((i) => (i.type === 'function_call' && i.call_id && i.name ? [{ callId: i.call_id, name: i.name, args: i.arguments ?? '' }] : []));
        if (calls.length) host.toolCalls(calls);
        return;
      }
      case 'error':
        // a refused session (bad key, unknown model) ends it; anything else is reported and the talk goes on
        // (the vendor's own text is not echoed for a key: it may quote part of it)
        if (ev.error.code === 'invalid_api_key') return host.fail(`${VENDOR}: the API key was refused`);
        if (ev.error.code === 'model_not_found') return host.fail(`${VENDOR}: the model ${this.o.model} was not found`);
        host.warn(new Error(`${VENDOR}: ${ev.error.message}`));
        return;
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.rt?.close({ code: 1000, reason: 'done' });
    } catch {
      // already closed
    }
  }
}
