/**
 * Deepgram's Voice Agent API (engine_model `deepgram-agent.<think model>`): `wss://…/v1/agent/converse`
 * through the official `@deepgram/sdk` (its agent socket: URL, `Authorization: Token`, message
 * shapes), over a transport of ours (the SDK's `transportFactory`): a `ws` socket whose `lookup`
 * pins it to the address the egress policy checked.
 *
 * - Settings: audio in/out µ-law 8 kHz on a narrowband leg, linear16 16 kHz on a wideband one;
 *   agent.listen (Deepgram STT), agent.think (the model, the AI's prompt, the platform's tools as
 *   functions), agent.speak (tts_voice_id, default aura-2-thalia-en), agent.greeting (parameter.greeting).
 * - greeting: Settings' greeting, spoken at once; without one, InjectUserMessage asks for a greeting.
 * - caller audio and model audio: binary frames.
 * - barge-in: UserStartedSpeaking (the vendor stopped its own speech); no truncate message exists,
 *   the cut is the host's dropping of what was not yet played. A response ends with AgentAudioDone.
 * - transcripts: ConversationText (user, assistant); the assistant's comes before its response's audio
 *   and is reported with it (at its first audio frame, else before the next message); when the session
 *   ends first, as the session ends (drain), marked cut: none of its audio played.
 * - function calls: FunctionCallRequest (client_side) → FunctionCallResponse; the agent goes on.
 * - the caller's turn: ConversationText role user is the vendor's transcript of the caller's whole
 *   utterance (its turn over); the next AgentStartedSpeaking, sent as the reply's audio starts, has
 *   `total_latency`, the seconds from the end of that utterance to the reply: the speech end reported
 *   (callerSpeechEnded) is its arrival less total_latency. Deepgram says nothing of when its end-of-turn
 *   detection decided.
 */
import WebSocket from 'ws';
import { DeepgramClient, type DeepgramTransport, type DeepgramTransportMessage } from '@deepgram/sdk';
import type { agent as dg } from '@deepgram/sdk';
import { netError } from '../../voices/http-stream';
import { pcmToUlaw, ulawToPcm } from '../../voices/pcm';
import { LINK_DRAIN_MAX_MESSAGES, LINK_DRAIN_MAX_MS, upgradeError, type LinkHost, type LinkOptions, type LinkRate, type LinkSetup, type LinkToolResult, type ModelLink } from './link';

const VENDOR = 'deepgram-agent';

type AgentSocket = Awaited<ReturnType<DeepgramClient['agent']['v1']['connect']>>;

/** The think provider a model name belongs to (Deepgram's provider types). */
function thinkProvider(model: string): string {
  if (/^claude/i.test(model)) return 'anthropic';
  if (/^gemini/i.test(model)) return 'google';
  if (/^(llama|mixtral|gemma)/i.test(model)) return 'groq';
  return 'open_ai';
}

export class DeepgramAgentLink implements ModelLink {
  readonly vendor = VENDOR;
  readonly legRate = true;
  private ws: WebSocket | null = null;
  private socket: AgentSocket | null = null;
  private closed = false;
  private rate: LinkRate = 8000;
  private response = 1;
  private speaking = false;
  /** the caller's utterance was transcribed (ConversationText user) and no reply has started since */
  private callerTurn = false;
  /** the agent's words (ConversationText assistant) waiting for their response's first audio */
  private saidText: string | null = null;
  /** messages in arrival order (binary audio is read asynchronously from its Blob) */
  private queue: Promise<void> = Promise.resolve();
  /** the session is ending (drain): how many queued messages are still taken; none arriving from then on */
  private drainLeft: number | null = null;

  constructor(private readonly o: LinkOptions) {}

  async connect(rate: LinkRate, setup: LinkSetup, host: LinkHost, signal: AbortSignal): Promise<void> {
    if (!this.o.apiKey) throw new Error(`${VENDOR}: no API key: set the AI's engine_key or DEEPGRAM_API_KEY on the server`);
    let checked;
    try {
      checked = await this.o.egress.checkDestination(new URL(this.o.baseUrl).hostname);
    } catch (e) {
      throw netError(VENDOR, e);
    }
    this.rate = rate;
    let opened = false;
    let fail: (e: Error) => void = () => undefined;
    const failed = new Promise<never>((_, reject) => (fail = reject));
    failed.catch(() => undefined);
    const transportFactory = (url: string, headers: Record<string, string>, req: { protocols: string[] }): DeepgramTransport => {
      const ws = new WebSocket(url, req.protocols, { headers, lookup: checked.lookup, handshakeTimeout: 10_000, ...(this.o.ca ? { ca: this.o.ca } : {}) });
      this.ws = ws;
      ws.on('error', (e) => (opened ? host.warn(new Error(`${VENDOR}: ${e.message}`)) : fail(upgradeError(VENDOR, e))));
      ws.on('close', (code) => {
        if (!opened) return fail(new Error(`${VENDOR}: the vendor closed the connection (${code})`));
        host.fail(`${VENDOR}: the vendor closed the connection (${code})`);
      });
      return {
        send: (d: DeepgramTransportMessage) => {
          if (ws.readyState !== WebSocket.OPEN) return;
          if (typeof d === 'string' || d instanceof ArrayBuffer || ArrayBuffer.isView(d)) ws.send(d);
          else void d.arrayBuffer().then((b) => ws.readyState === WebSocket.OPEN && ws.send(b));
        },
        onOpen: (l) => void ws.on('open', l),
        onMessage: (l) =>
          void ws.on('message', (data, isBinary) => {
            const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
            l(isBinary ? new Uint8Array(bytes) : bytes.toString('utf8'));
          }),
        onError: (l) => void ws.on('error', l),
        onClose: (l) => void ws.on('close', (code, reason) => l({ code, reason: reason.toString() })),
        isOpen: () => ws.readyState === WebSocket.OPEN,
        close: (code, reason) => ws.close(code ?? 1000, reason),
      };
    };
    const client = new DeepgramClient({ apiKey: this.o.apiKey, baseUrl: this.o.baseUrl, transportFactory });
    const onAbort = () => fail(new Error(`${VENDOR}: cancelled`));
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const socket = await Promise.race([client.agent.v1.connect({ reconnectAttempts: 0, connectionTimeoutInSeconds: 10 }), failed]);
      this.socket = socket;
      socket.on('message', (m) => {
        if (this.drainLeft !== null) return;
        this.queue = this.queue.then(() => this.take(m, host)).catch((e: Error) => host.warn(e));
      });
      socket.connect();
      await Promise.race([socket.waitForOpen(), failed]);
      opened = true;
    } catch (e) {
      this.ws?.terminate();
      throw e;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    this.socket.sendSettings(this.settings(setup));
  }

  private settings(setup: LinkSetup): dg.AgentV1Settings {
    const enc = this.rate === 16000 ? { encoding: 'linear16', sample_rate: 16000 } : { encoding: 'mulaw', sample_rate: 8000 };
    return {
      type: 'Settings',
      audio: { input: enc, output: { ...enc, container: 'none' } },
      agent: {
        language: this.o.language.slice(0, 2).toLowerCase(),
        listen: { provider: { type: 'deepgram', model: 'nova-3' } },
        think: {
          provider: { type: thinkProvider(this.o.model), model: this.o.model },
          prompt: setup.instructions,
          functions: setup.tools.map((t) => ({ name: t.function.name, description: t.function.description, parameters: t.function.parameters })),
        },
        speak: { provider: { type: 'deepgram', model: this.o.voice || 'aura-2-thalia-en' } },
        ...(this.o.greeting ? { greeting: this.o.greeting } : {}),
      },
    } as dg.AgentV1Settings;
  }

  sendAudio(pcm: Int16Array): void {
    if (this.closed || !this.socket) return;
    this.socket.sendMedia(this.rate === 16000 ? new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength) : pcmToUlaw(pcm));
  }

  greet(): void {
    // a Settings greeting is spoken by the vendor as soon as the settings are applied
    if (!this.o.greeting) this.socket?.sendInjectUserMessage({ type: 'InjectUserMessage', content: 'The call has just been answered. Greet the caller now, briefly.' });
  }

  /** Deepgram has no truncate message: the vendor stopped on its own, the host dropped what was queued. */
  truncate(): void {}

  toolResults(results: LinkToolResult[], next: { setup: LinkSetup; handoff: boolean } | null): void {
    if (!this.socket || this.closed || !next) return;
    // a team hand-off: the next member's prompt (Deepgram keeps the functions of the Settings)
    if (next.handoff) this.socket.sendUpdatePrompt({ type: 'UpdatePrompt', prompt: next.setup.instructions });
    for (const r of results) this.socket.sendFunctionCallResponse({ type: 'FunctionCallResponse', id: r.callId, name: r.name, content: r.output });
  }

  private async onMessage(m: unknown, host: LinkHost): Promise<void> {
    if (this.closed) return;
    if (m instanceof Blob || m instanceof ArrayBuffer || ArrayBuffer.isView(m)) {
      const bytes = m instanceof Blob ? new Uint8Array(await m.arrayBuffer()) : m instanceof ArrayBuffer ? new Uint8Array(m) : new Uint8Array(m.buffer, m.byteOffset, m.byteLength);
      if (this.closed || !bytes.length) return;
      this.speaking = true;
      const pcm = this.rate === 16000 ? new Int16Array(bytes.slice(0, bytes.length & ~1).buffer) : ulawToPcm(bytes);
      const item = `response-${this.response}`;
      host.audio(item, pcm, this.rate);
      // the words of this response came before its audio: they are its words
      this.flushSaid(host, item);
      return;
    }
    const msg = (typeof m === 'string' ? JSON.parse(m) : m) as { type?: string } & Record<string, unknown>;
    // words whose audio did not follow (cut, a function call): reported on their own before anything else
    if (msg.type !== 'AgentStartedSpeaking' && msg.type !== 'AgentThinking') this.flushSaid(host);
    switch (msg.type) {
      case 'UserStartedSpeaking':
        host.callerSpeaking();
        if (this.speaking) this.nextResponse();
        return;
      case 'AgentAudioDone':
        return this.nextResponse();
      case 'AgentStartedSpeaking': {
        const total = (msg as unknown as dg.AgentV1AgentStartedSpeaking).total_latency;
        if (this.callerTurn && typeof total === 'number' && Number.isFinite(total) && total >= 0) host.callerSpeechEnded(Date.now() - total * 1000);
        this.callerTurn = false;
        return;
      }
      case 'ConversationText': {
        const c = msg as unknown as dg.AgentV1ConversationText;
        const text = c.content.trim();
        if (!text) return;
        if (c.role === 'user') {
          this.callerTurn = true;
          return host.heard(text);
        }
        // the agent's words come before the response's audio (AgentStartedSpeaking, binary frames): held
        // until its first audio, so the reply they are recorded with is the one being heard
        this.saidText = text;
        return;
      }
      case 'FunctionCallRequest': {
        const calls = (msg as unknown as dg.AgentV1FunctionCallRequest).functions.filter((f) => f.client_side);
        if (calls.length) host.toolCalls(calls.map((f) => ({ callId: f.id, name: f.name, args: f.arguments })));
        return;
      }
      case 'Error': {
        const e = msg as unknown as dg.AgentV1Error;
        // a refused session ends it; the vendor's own text is not echoed for a key
        if (/auth|key|credential/i.test(e.code ?? '')) return host.fail(`${VENDOR}: the API key was refused`);
        host.warn(new Error(`${VENDOR}: ${e.code}: ${e.description}`));
        return;
      }
    }
  }

  /** A queued message, unless the session's end has taken as many as it takes. */
  private async take(m: unknown, host: LinkHost): Promise<void> {
    if (this.drainLeft !== null && this.drainLeft-- <= 0) return;
    return this.onMessage(m, host);
  }

  /**
   * The session ends: the messages already queued are taken (bounded); then the words waiting for their
   * response's audio are what was said up to the end, none of it heard.
   */
  async drain(host: LinkHost): Promise<void> {
    if (this.closed || this.drainLeft !== null) return;
    this.drainLeft = LINK_DRAIN_MAX_MESSAGES;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([this.queue, new Promise<void>((r) => (timer = setTimeout(r, LINK_DRAIN_MAX_MS)))]);
    } finally {
      clearTimeout(timer);
    }
    if (!this.closed) this.flushSaid(host, `response-${this.response}`, true);
  }

  /** The agent's words held back, to the host (`unplayed`: the session ends before their audio). */
  private flushSaid(host: LinkHost, item?: string, unplayed?: boolean): void {
    const text = this.saidText;
    this.saidText = null;
    if (text) host.said(text, item, unplayed);
  }

  private nextResponse(): void {
    this.speaking = false;
    this.response++;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.ws?.close(1000, 'done');
    } catch {
      // already closed
    }
  }
}
