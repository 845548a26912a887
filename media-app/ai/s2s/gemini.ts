/**
 * Gemini's Live API (engine_model `gemini-live.<model>`): the BidiGenerateContent WebSocket through
 * the official `@google/genai` SDK's Live client. The SDK's own Node socket takes no connection
 * options, so the Live client is built over the SDK's ApiClient (reachable by subclassing
 * GoogleGenAI, where it is protected) with a WebSocket factory of ours: a `ws` socket whose `lookup`
 * pins it to the address the egress policy checked. The SDK builds the URL (`?key=`), the setup
 * message and the client messages.
 *
 * - setup: systemInstruction, tools (functionDeclarations), responseModalities AUDIO, speechConfig
 *   voice, caller and model transcription, the server VAD's silence; then a client turn asks the
 *   model to greet.
 * - caller audio: realtimeInput audio, PCM 16 kHz (a narrowband leg's 8 kHz resampled up).
 * - model audio: serverContent.modelTurn inlineData PCM 24 kHz, resampled once to the leg's rate.
 * - barge-in: serverContent.interrupted (the vendor stopped generating on the caller's speech), or the
 *   caller's first transcribed words while the model's audio still plays (its generation, faster
 *   than real time, may be over); Gemini has no truncate message, so the cut is the host's dropping
 *   of what was not yet played.
 * - function calls: toolCall.functionCalls → toolResponse.functionResponses; the model goes on.
 * - the caller's turn: Gemini sends no event at the end of the caller's speech nor at its VAD's
 *   decision; the caller's words (inputTranscription) followed by the model's audio of a new turn
 *   say the turn ended, and the last words' arrival is the speech end reported (callerSpeechEnded,
 *   just before that audio): the transcript of the last words comes after they were said, so the
 *   stages measured from it are, if anything, short.
 * - transcripts: the pieces are gathered (the caller's until the model's audio, the model's until its turn
 *   completes); when the session ends first, what was gathered is reported as it ends (drain), the
 *   model's turn cut.
 */
import { GoogleGenAI, Live, Modality, type LiveServerMessage, type Session } from '@google/genai';
import WebSocket from 'ws';
import type { ToolDef } from '../../../core/llm/client';
import { netError } from '../../voices/http-stream';
import { PcmToRate } from '../../voices/pcm';
import { upgradeError, type LinkHost, type LinkOptions, type LinkRate, type LinkSetup, type LinkToolResult, type ModelLink } from './link';

const VENDOR = 'gemini-live';

type LiveArgs = ConstructorParameters<typeof Live>;
type WsFactory = LiveArgs[2];
type WsCallbacks = Parameters<WsFactory['create']>[2];

/** The SDK's client with a Live API whose sockets come from `factory`. */
class PinnedGenAI extends GoogleGenAI {
  readonly pinnedLive: Live;
  constructor(apiKey: string, baseUrl: string, factory: WsFactory) {
    // the Gemini API, never Vertex (whatever GOOGLE_GENAI_USE_VERTEXAI says)
    super({ apiKey, vertexai: false, httpOptions: { baseUrl } });
    // the Gemini API (not Vertex) carries the key in the URL: nothing for Auth to add
    const noAuth: LiveArgs[1] = { addAuthHeaders: async () => undefined };
    this.pinnedLive = new Live(this.apiClient, noAuth, factory);
  }
}

const geminiTools = (defs: ToolDef[]) => [{ functionDeclarations: defs.map((d) => ({ name: d.function.name, description: d.function.description, parametersJsonSchema: d.function.parameters })) }];

const GREET = 'The call has just been answered. Greet the caller now, briefly.';

export class GeminiLiveLink implements ModelLink {
  readonly vendor = VENDOR;
  readonly legRate = true;
  private ws: WebSocket | null = null;
  private session: Session | null = null;
  private closed = false;
  private rate: LinkRate = 8000;
  private up: PcmToRate | null = null;
  private down: { inRate: number; conv: PcmToRate } | null = null;
  private turn = 1;
  private heardText = '';
  private saidText = '';
  /** when the caller's last words since the model's last audio came (inputTranscription); null: none */
  private lastWordsAt: number | null = null;
  /** the current turn (`turn`) has had model audio */
  private turnAudio = false;

  constructor(private readonly o: LinkOptions) {}

  async connect(rate: LinkRate, setup: LinkSetup, host: LinkHost, signal: AbortSignal): Promise<void> {
    if (!this.o.apiKey) throw new Error(`${VENDOR}: no API key: set the AI's engine_key or GEMINI_API_KEY on the server`);
    let checked;
    try {
      checked = await this.o.egress.checkDestination(new URL(this.o.baseUrl).hostname);
    } catch (e) {
      throw netError(VENDOR, e);
    }
    this.rate = rate;
    if (rate !== 16000) this.up = new PcmToRate(rate, 16000);
    let setupDone = false;
    let fail: (e: Error) => void = () => undefined;
    const failed = new Promise<never>((_, reject) => (fail = reject));
    failed.catch(() => undefined);
    const factory: WsFactory = {
      create: (url: string, headers: Record<string, string>, cb: WsCallbacks) => {
        const open = () => {
          const ws = new WebSocket(url, { headers, lookup: checked.lookup, handshakeTimeout: 10_000, ...(this.o.ca ? { ca: this.o.ca } : {}) });
          this.ws = ws;
          ws.onopen = cb.onopen;
          ws.onmessage = cb.onmessage;
          ws.on('error', (e) => (setupDone ? host.warn(new Error(`${VENDOR}: ${e.message}`)) : fail(upgradeError(VENDOR, e))));
          ws.on('close', (code, why) => {
            const reason = why.toString();
            if (!setupDone) return fail(refusal(code, reason));
            host.fail(/api key/i.test(reason) ? `${VENDOR}: the API key was refused (${code})` : `${VENDOR}: the vendor closed the connection (${code})`);
          });
        };
        return {
          connect: open,
          send: (m: string) => this.ws?.readyState === WebSocket.OPEN && this.ws.send(m),
          close: () => this.ws?.close(1000, 'done'),
        };
      },
    };
    const ai = new PinnedGenAI(this.o.apiKey, this.o.baseUrl, factory);
    const onAbort = () => fail(new Error(`${VENDOR}: cancelled`));
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      this.session = await Promise.race([
        ai.pinnedLive.connect({
          model: this.o.model,
          config: {
            responseModalities: [Modality.AUDIO],
            systemInstruction: setup.instructions,
            tools: geminiTools(setup.tools),
            speechConfig: { languageCode: this.o.language, ...(this.o.voice ? { voiceConfig: { prebuiltVoiceConfig: { voiceName: this.o.voice } } } : {}) },
            inputAudioTranscription: {},
            outputAudioTranscription: {},
            realtimeInputConfig: { automaticActivityDetection: { silenceDurationMs: this.o.silenceMs ?? 500 } },
          },
          callbacks: { onmessage: (m: LiveServerMessage) => this.onMessage(m, host) },
        }),
        failed,
      ]);
      setupDone = true;
    } catch (e) {
      this.ws?.terminate();
      throw e;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  sendAudio(pcm: Int16Array): void {
    if (this.closed || !this.session) return;
    const at16 = this.up ? this.up.pcm(pcm) : pcm;
    const data = Buffer.from(at16.buffer, at16.byteOffset, at16.byteLength).toString('base64');
    this.session.sendRealtimeInput({ audio: { data, mimeType: 'audio/pcm;rate=16000' } });
  }

  greet(): void {
    const text = this.o.greeting ? `The call has just been answered. Greet the caller with exactly: ${this.o.greeting}` : GREET;
    this.session?.sendClientContent({ turns: [{ role: 'user', parts: [{ text }] }], turnComplete: true });
  }

  /** Gemini has no truncate message: the vendor stopped on its own, the host dropped what was queued. */
  truncate(): void {}

  toolResults(results: LinkToolResult[], next: { setup: LinkSetup; handoff: boolean } | null): void {
    if (!this.session || this.closed) return;
    if (next?.handoff) {
      // the setup (instructions, tools) is fixed for a Live session: the next member's prompt comes as a turn
      this.session.sendClientContent({ turns: [{ role: 'user', parts: [{ text: `From now on, follow these instructions:\n${next.setup.instructions}` }] }], turnComplete: false });
    }
    if (!next) return;
    this.session.sendToolResponse({ functionResponses: results.map((r) => ({ id: r.callId, name: r.name, response: { output: r.output } })) });
  }

  /**
   * The session ends: the words gathered as they come (the caller's until the model answers, the model's
   * until its turn completes) are what was said up to the end; the model's turn is cut by it.
   */
  async drain(host: LinkHost): Promise<void> {
    if (this.closed) return;
    this.flushHeard(host);
    this.flushSaid(host, `turn-${this.turn}`, true);
  }

  private flushHeard(host: LinkHost): void {
    const t = this.heardText.replace(/\s+/g, ' ').trim();
    this.heardText = '';
    if (t) host.heard(t);
  }

  /** The model's words gathered, to the host (`item`, `unplayed`: the session ends with its turn cut). */
  private flushSaid(host: LinkHost, item?: string, unplayed?: boolean): void {
    const t = this.saidText.replace(/\s+/g, ' ').trim();
    this.saidText = '';
    if (t) host.said(t, item, unplayed);
  }

  private onMessage(m: LiveServerMessage, host: LinkHost): void {
    if (this.closed) return;
    const sc = m.serverContent;
    if (sc) {
      if (sc.inputTranscription?.text) {
        // the caller's words while the model's audio still plays: the vendor sends `interrupted` only
        // while it is generating, and it generates faster than real time; the host cuts what is playing
        host.callerSpeaking();
        this.heardText += sc.inputTranscription.text;
        this.lastWordsAt = Date.now();
      }
      if (sc.interrupted) {
        host.callerSpeaking();
        this.flushSaid(host);
        this.nextTurn();
      }
      for (const part of sc.modelTurn?.parts ?? []) {
        const audio = part.inlineData;
        if (!audio?.data || !audio.mimeType?.startsWith('audio/pcm')) continue;
        this.flushHeard(host);
        const inRate = Number(/rate=(\d+)/.exec(audio.mimeType)?.[1] ?? 24000);
        if (this.down?.inRate !== inRate) {
          this.down?.conv.close();
          this.down = { inRate, conv: new PcmToRate(inRate, this.rate) };
        }
        const pcm = this.down.conv.push(Buffer.from(audio.data, 'base64'));
        if (!pcm.length) continue;
        // the model's first audio of a turn after the caller's words: the caller's turn ended
        if (!this.turnAudio && this.lastWordsAt !== null) host.callerSpeechEnded(this.lastWordsAt);
        this.turnAudio = true;
        this.lastWordsAt = null;
        host.audio(`turn-${this.turn}`, pcm, this.rate);
      }
      if (sc.outputTranscription?.text) {
        this.flushHeard(host);
        this.saidText += sc.outputTranscription.text;
      }
      if (sc.turnComplete) {
        this.flushHeard(host);
        this.flushSaid(host);
        this.nextTurn();
      }
    }
    const calls = m.toolCall?.functionCalls ?? [];
    if (calls.length) {
      this.flushHeard(host);
      this.flushSaid(host);
      host.toolCalls(calls.map((c, i) => ({ callId: c.id ?? `call-${this.turn}-${i}`, name: c.name ?? '', args: JSON.stringify(c.args ?? {}) })));
    }
    if (m.goAway) host.warn(new Error(`${VENDOR}: the vendor will close the session in ${m.goAway.timeLeft ?? '?'}`));
  }

  private nextTurn(): void {
    this.turn++;
    this.turnAudio = false;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.up?.close();
    this.down?.conv.close();
    try {
      this.ws?.close(1000, 'done');
    } catch {
      // already closed
    }
  }
}

/** The vendor closed the socket before the session was set up: a refused key, or another refusal. */
function refusal(code: number, reason: string): Error {
  if (/api key/i.test(reason)) return new Error(`${VENDOR}: the API key was refused (${code})`);
  return new Error(`${VENDOR}: the vendor refused the session (${code}${reason ? `: ${reason.slice(0, 200)}` : ''})`);
}
