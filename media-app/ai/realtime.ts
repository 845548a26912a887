/**
 * ai_talk with a speech-to-speech model (docs/ai.md "Speech-to-speech"): the host side, shared by
 * every model. The call's audio goes to the model over its link (one file per vendor in s2s/:
 * OpenAI Realtime, Gemini Live, Deepgram Voice Agent) and the model's audio comes back into the call
 * as it arrives.
 *
 * - caller audio: an 'in' fork of the endpoint (at the leg's rate when the link wants it) → the
 *   link, 40 ms a message, once the link is configured.
 * - model audio: injected into an 'out' fork at its rate; what was injected and when is kept, so
 *   what has actually been played is known at any moment.
 * - barge-in: the vendor hears the caller while the model's audio still plays: the fork is dropped
 *   (queued audio with it), the item cut at what was played (where the vendor has such a message),
 *   its late audio dropped, and a `barge_in` reported with the ms played.
 * - function calls: run by AiSession.callTool (the text path's tool mapping), answered through the
 *   link; a tool that ends the conversation ends it once the audio has played out; a team hand-off
 *   gives the link the next member's prompt and tools.
 * - transcripts (the caller's, the model's) become aimessages, in the order they arrive (words a link
 *   holds for audio that has not come are given as the session ends, cut: ModelLink.drain); each reply's
 *   latency (realtime-turns.ts: the caller's speech end, the vendor's end of turn, the model's first
 *   audio, its first audio out) goes onto its message.
 */
import { EventEmitter } from 'node:events';
import type { CallEndpoint } from '../media-server/endpoint';
import type { MediaFork } from '../media-server/tap';
import type { AiSession } from '../../core/ai/session';
import { AGENT_FORK_MAX_IN_FLIGHT, type VoiceEnd } from './voice';
import type { LinkHost, LinkRate, LinkToolCall, ModelLink } from './s2s/link';
import { OutFork } from './out-fork';
import { RealtimeTurns } from './realtime-turns';

export interface RealtimeAgentEvents {
  /** the model's audio was cut by the caller: ms of it that had been played */
  barge_in: [playedMs: number];
  /** something went wrong that does not end the session */
  error: [err: Error];
}

/** caller audio per message to the model, in 20 ms frames */
const FRAMES_PER_SEND = 2;

export class RealtimeAgent extends EventEmitter<RealtimeAgentEvents> {
  private inFork: MediaFork | null = null;
  /** the fork the model's audio is injected into: its one owner */
  private readonly outFork: OutFork;
  private ready = false;
  private pending: Int16Array[] = [];
  /** the model's audio item now playing: its id and ms injected; when the injected audio ends */
  private playing: { itemId: string; injectedMs: number } | null = null;
  private playEnd = 0;
  /** items cut by barge-in: their late audio is dropped */
  private readonly cut = new Set<string>();
  /** aimessages and tool calls, in the order the events came */
  private chain: Promise<unknown> = Promise.resolve();
  private aiId: string;
  private finished = false;
  /** the transcript still takes the link's words: until the link is drained at the session's end */
  private recording = true;
  private timers: NodeJS.Timeout[] = [];
  private resolveEnd!: (e: VoiceEnd) => void;
  /** each reply's latency */
  private readonly turns = new RealtimeTurns();
  /** ms of caller audio given to the link, and when the last of it was (so a position in it has a time) */
  private sentMs = 0;
  private sentAt = 0;
  private rate: LinkRate = 8000;
  /** what the link reports to, from start on (its drain at the end reports there too) */
  private host: LinkHost | null = null;
  readonly done: Promise<VoiceEnd>;

  constructor(
    private readonly ep: CallEndpoint,
    private readonly session: AiSession,
    private readonly link: ModelLink,
    private readonly o: { maxDurationMs?: number } = {},
  ) {
    super();
    this.outFork = new OutFork(() => this.ep.forkAudioStart({ mix: 'out', onFrame: () => undefined, maxInFlight: 50 }));
    this.done = new Promise((r) => (this.resolveEnd = r));
    this.on('error', () => undefined);
    this.aiId = session.currentAi.id;
  }

  get vendor(): string {
    return this.link.vendor;
  }

  /** Connects (refused URL, refused key, unreachable vendor: throws), configures the session, greets. */
  async start(signal: AbortSignal): Promise<this> {
    // the caller's fork first: its rate (16 kHz on a wideband leg, for a link that takes it) is the session's
    this.inFork = await this.ep.forkAudioStart({ mix: 'in', legRate: this.link.legRate, maxInFlight: AGENT_FORK_MAX_IN_FLIGHT, onFrame: (f) => this.onFrame(f) });
    const rate: LinkRate = this.inFork.rate === 16000 ? 16000 : 8000;
    this.rate = rate;
    const host: LinkHost = {
      audio: (item, pcm, r) => {
        this.turns.modelAudio(item);
        void this.play(item, pcm, r).catch((e: Error) => {
          // nothing of it went out: its reply's latency is known not to come
          this.turns.played(item, null);
          this.emit('error', e);
        });
      },
      callerSpeaking: () => this.bargeIn(),
      // the caller's audio is sent as it comes: a position in it was sent (sentMs - position) before the last send
      callerStopped: (atMs) => this.turns.callerEnded(this.sentAt ? this.sentAt - Math.max(0, this.sentMs - atMs) : Date.now()),
      callerSpeechEnded: (speechEndAt) => this.turns.callerEndedUndecided(speechEndAt),
      heard: (text) => this.inOrder(() => this.session.recordSpoken('user', text)),
      said: (text, item, unplayed) => this.inOrder(() => this.saidReply(text, item, unplayed === true)),
      // a tool call drained at the session's end is not run: the session is over
      toolCalls: (calls) => void (this.finished || this.inOrder(() => this.runTools(calls))),
      fail: (message) => this.finish({ kind: 'error', message }),
      warn: (e) => this.emit('error', e),
    };
    this.host = host;
    try {
      await this.link.connect(rate, this.session.realtimeSetup(), host, signal);
    } catch (e) {
      this.finished = true;
      void this.inFork.stop().catch(() => undefined);
      this.link.close();
      throw e;
    }
    this.ready = true;
    // the caller hung up while the link connected: that 'destroy' has gone by, nothing is said
    if (this.ep.destroyed) {
      this.finish({ kind: 'hangup' });
      return this;
    }
    const onAbort = () => this.finish({ kind: 'aborted' });
    signal.addEventListener('abort', onAbort, { once: true });
    this.ep.once('destroy', () => this.finish({ kind: 'hangup' }));
    if (this.o.maxDurationMs && this.o.maxDurationMs > 0) this.timers.push(setTimeout(() => this.finish({ kind: 'duration' }), this.o.maxDurationMs));
    void this.done.then(() => signal.removeEventListener('abort', onAbort));
    // the agent speaks first
    this.turns.asked();
    this.link.greet();
    return this;
  }

  private onFrame(frame: Int16Array): void {
    if (this.finished || !this.ready) return;
    this.pending.push(frame);
    if (this.pending.length < FRAMES_PER_SEND) return;
    const n = this.pending.reduce((a, f) => a + f.length, 0);
    const pcm = new Int16Array(n);
    let at = 0;
    for (const f of this.pending) {
      pcm.set(f, at);
      at += f.length;
    }
    this.pending = [];
    this.link.sendAudio(pcm);
    this.sentMs += n / (this.rate / 1000);
    this.sentAt = Date.now();
  }

  /**
   * The model's words as its aimessage (in the events' order), then the reply's latency once its first
   * audio went out (or never will): waited for outside the ordered chain, so a reply whose audio never
   * plays holds back no later message or tool call. `unplayed` (words given as the session ends, their
   * audio never played): cut, and its latency recorded inside the chain, so before the session's end.
   */
  private async saidReply(text: string, item: string | undefined, unplayed: boolean): Promise<void> {
    const row = await this.session.recordSpoken('assistant', text);
    const cut = unplayed || (item ? this.cut.has(item) : false);
    const recorded = this.turns
      .latencyOf(item, cut)
      .then((latency) => (latency ? this.session.recordTurn([row.id], latency) : undefined))
      .catch((e: Error) => this.emit('error', e));
    if (unplayed) await recorded;
  }

  /** In the order of the events: messages are stored one after the other. */
  private inOrder(fn: () => Promise<unknown>): void {
    if (!this.recording) return;
    this.chain = this.chain.then(fn).catch((e: Error) => this.emit('error', e));
  }

  private async play(itemId: string, pcm: Int16Array, rate: LinkRate): Promise<void> {
    if (!pcm.length) return;
    if (this.finished || this.cut.has(itemId)) return this.turns.played(itemId, null);
    const fork = await this.outFork.get();
    if (!fork || this.finished || this.cut.has(itemId)) return this.turns.played(itemId, null);
    const now = Date.now();
    if (this.playing?.itemId !== itemId) this.playing = { itemId, injectedMs: 0 };
    // it plays once what is queued before it has
    this.turns.played(itemId, Math.max(this.playEnd, now));
    fork.inject(pcm, rate);
    const ms = pcm.length / (rate / 1000);
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
    if (this.finished) return;
    const item = this.playing;
    if (!item || this.playEnd <= Date.now()) return;
    const played = this.playedMs();
    this.silence();
    this.cut.add(item.itemId);
    this.link.truncate(item.itemId, played);
    this.emit('barge_in', played);
  }

  /** Drops the 'out' fork and what it still had queued. */
  private silence(): void {
    this.playing = null;
    this.playEnd = 0;
    this.outFork.drop();
  }

  private async runTools(calls: LinkToolCall[]): Promise<void> {
    const results = [];
    for (const c of calls) {
      const output = await this.session.callTool({ id: c.callId, type: 'function', function: { name: c.name, arguments: c.args } });
      results.push({ ...c, output });
    }
    const end = this.session.endRequest;
    if (end) {
      this.link.toolResults(results, null);
      // what the model said before the call (a goodbye) plays out first
      const left = this.playEnd - Date.now();
      if (left > 0) await new Promise((r) => setTimeout(r, left));
      return this.finish(end);
    }
    const handoff = this.session.currentAi.id !== this.aiId;
    this.aiId = this.session.currentAi.id;
    this.link.toolResults(results, { setup: this.session.realtimeSetup(), handoff });
  }

  private finish(e: VoiceEnd): void {
    if (this.finished) return;
    this.finished = true;
    for (const t of this.timers) clearTimeout(t);
    void this.inFork?.stop().catch(() => undefined);
    if (e.kind !== 'hangup') this.silence();
    // a fork still opening is stopped when it opens (on a hang-up the endpoint's end stops the open one)
    this.outFork.close();
    // what the link already received (the caller's last words, the model's) and the words it holds for audio
    // that has not come are part of the transcript (bounded): given while the chain takes them
    const drained = (this.host && this.link.drain?.(this.host)) || Promise.resolve();
    void drained
      .catch(() => undefined)
      .then(() => {
        this.recording = false;
        this.turns.close();
        this.link.close();
        // the messages still being stored are part of the end
        void this.chain.finally(() => this.resolveEnd(e));
      });
  }

  /** Stops the model's speech (the stop_media tool). */
  async stopMedia(): Promise<void> {
    const item = this.playing;
    const played = this.playedMs();
    this.silence();
    if (item) {
      this.cut.add(item.itemId);
      this.link.truncate(item.itemId, played);
    }
  }
}
