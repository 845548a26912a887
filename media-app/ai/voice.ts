/**
 * The voice loop of ai_talk on one call: the endpoint's VAD tap (run in the media worker, which
 * reports only where the caller's turns start and stop) drives turn detection and barge-in, and the
 * caller's audio (an 'in' fork of the endpoint) goes to a streaming recogniser for the words;
 * at the end of each caller turn the recognised text goes to the AI session, whose streamed answer
 * is spoken sentence by sentence (endpoint.say) as the LLM produces it.
 *
 * States, as in a half-duplex conversation: listening → (caller turn ends) thinking → speaking →
 * listening. Caller speech while thinking or speaking is a barge-in: the reply is aborted and
 * playback stopped at once; the new utterance becomes the next turn.
 */
import { EventEmitter } from 'node:events';
import { createSttProvider, type AudioFork, type Endpoint, type SpeechEvent, type SttStream, type TranscriptEvent } from '../../media-engine';
import type { AiSession, EndRequest } from '../../core/ai/session';
import { activeContext, startSpan, type Span } from '../../core/tracing';
import type { Speaker } from '../voices';
import type { AiRow } from '../../core/repos/ais';

export interface VoiceOptions {
  language: string;
  /** STT provider name (default pocketsphinx) */
  sttProvider?: string;
  /** restrict recognition to these phrases (pocketsphinx grammar) */
  phrases?: string[];
  ttsProvider?: string;
  voice?: string;
  /** a cloud voice (media-app/voices): spoken through it instead of endpoint.say */
  speaker?: Speaker;
  /** the voice of each AI (a team's members each speak with their own); default: the fields above */
  voiceFor?: (ai: AiRow) => AgentVoice;
  /** seconds of speech that start a caller turn (default 0.2) */
  startSecs?: number;
  /** seconds of silence that end a caller turn (default 0.6) */
  stopSecs?: number;
  /** maximum session length, ms (0: none) */
  maxDurationMs?: number;
  /** how long to wait for the recogniser's words after a turn ends, ms (default 4000) */
  sttWaitMs?: number;
}

/** How one AI speaks: a cloud voice's speaker, or a local voice through endpoint.say. */
export interface AgentVoice {
  speaker?: Speaker;
  ttsProvider?: string;
  voice?: string;
}

export type VoiceEnd = EndRequest | { kind: 'duration' } | { kind: 'hangup' } | { kind: 'aborted' } | { kind: 'error'; message: string };

type State = 'listening' | 'thinking' | 'speaking';

/** What a VoiceAgent reports (event name → listener arguments). */
export interface VoiceAgentEvents {
  /** the caller started a turn (VAD) */
  turn_start: [];
  /** the caller spoke over the agent's reply: it was cut */
  barge_in: [];
  /** the caller's turn ended */
  turn_end: [];
  /** the agent's reply started playing */
  speaking: [];
  /** the recogniser failed */
  error: [err: Error];
  /** the voice failed (no fallback, or the fallback failed too): the session ends with it */
  tts_error: [err: Error];
}

export class VoiceAgent extends EventEmitter<VoiceAgentEvents> {
  /** The context the agent was started in (its ai_talk action's span): each turn's span is its child. */
  private readonly traceParent = activeContext();
  private state: State = 'listening';
  private fork: AudioFork | null = null;
  private stt: SttStream | null = null;
  private inTurn = false;
  private readonly onSpeech = (e: SpeechEvent) => (e.state === 'start' ? this.turnStarts() : this.turnEnds());
  /** recognised text since the current turn started */
  private heard: string[] = [];
  private turnStartedAt = 0;
  private reply: AbortController | null = null;
  private speaking = 0;
  private finished = false;
  private resolveEnd!: (e: VoiceEnd) => void;
  readonly done: Promise<VoiceEnd>;
  private textWaiters: (() => void)[] = [];
  /** every cloud voice that spoke in this session (barge-in and the end silence them all) */
  private readonly speakers = new Set<Speaker>();
  /** the last sentence handed to a voice: a sentence in another voice waits for it to play out */
  private lastSaying: Promise<unknown> = Promise.resolve();
  private lastVoice: AgentVoice | null = null;
  private timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly ep: Endpoint,
    private readonly session: AiSession,
    private readonly o: VoiceOptions,
  ) {
    super();
    this.done = new Promise((r) => (this.resolveEnd = r));
    this.on('error', () => undefined);
  }

  async start(signal: AbortSignal): Promise<this> {
    // an unknown recogniser is an error of the session, never replaced by another one
    const provider = createSttProvider(this.o.sttProvider || undefined);
    this.stt = provider.createStream({ language: this.o.language, phrases: this.o.phrases?.length ? this.o.phrases : undefined, direction: 'inbound' });
    this.stt.on('transcript', (t: TranscriptEvent) => this.onTranscript(t));
    this.stt.on('error', (e: Error) => this.emit('error', e));
    this.ep.on('speech', this.onSpeech);
    await this.ep.vadStart({ mode: 2, startMs: (this.o.startSecs ?? 0.2) * 1000, stopMs: (this.o.stopSecs ?? 0.6) * 1000 });
    this.fork = await this.ep.forkAudioStart({ mix: 'in', maxInFlight: 50, onFrame: (f) => this.onFrame(f) });
    const onAbort = () => this.finish({ kind: 'aborted' });
    signal.addEventListener('abort', onAbort, { once: true });
    this.ep.once('destroy', () => this.finish({ kind: 'hangup' }));
    if (this.o.maxDurationMs && this.o.maxDurationMs > 0) this.timers.push(setTimeout(() => this.finish({ kind: 'duration' }), this.o.maxDurationMs));
    void this.done.then(() => signal.removeEventListener('abort', onAbort));
    // the agent speaks first (its greeting or opening line)
    void this.respond('');
    return this;
  }

  private onFrame(frame: Int16Array): void {
    if (!this.finished) this.stt?.write(frame);
  }

  private turnStarts(): void {
    if (this.finished || this.inTurn) return;
    this.inTurn = true;
    this.turnStartedAt = Date.now();
    this.heard = [];
    if (this.state !== 'listening') this.bargeIn();
    this.emit('turn_start');
  }

  /** Caller speech over the agent: drop the reply, silence the agent now. */
  private bargeIn(): void {
    this.reply?.abort();
    this.reply = null;
    void this.ep.stopPlayback().catch(() => undefined);
    for (const sp of this.speakers) void sp.stop();
    this.state = 'listening';
    this.emit('barge_in');
  }

  private onTranscript(t: TranscriptEvent): void {
    if (!t.final || !t.text.trim()) return;
    this.heard.push(t.text.trim());
    for (const w of this.textWaiters.splice(0)) w();
  }

  private turnEnds(): void {
    if (this.finished || !this.inTurn) return;
    this.inTurn = false;
    this.emit('turn_end');
    void this.takeTurn();
  }

  /**
   * One caller turn, as a span (core/tracing) with where its time went: the wait for the recogniser's
   * words after the turn ended, the LLM's first token, the first sentence handed to TTS.
   */
  private async takeTurn(): Promise<void> {
    const startedAt = this.turnStartedAt;
    const endedAt = Date.now();
    const span = startSpan('ai turn', { parent: this.traceParent, attributes: { 'openvoice.ai.caller_speech_ms': endedAt - startedAt } });
    try {
      // the recogniser closes its utterance on silence of its own: wait for its words
      const deadline = Date.now() + (this.o.sttWaitMs ?? 4000);
      while (!this.heard.length && Date.now() < deadline && !this.finished && !this.inTurn) {
        await new Promise<void>((r) => {
          const t = setTimeout(r, Math.max(0, deadline - Date.now()));
          this.textWaiters.push(() => {
            clearTimeout(t);
            r();
          });
        });
      }
      span.setAttribute('openvoice.ai.stt_wait_ms', Date.now() - endedAt);
      if (this.finished || this.inTurn || startedAt !== this.turnStartedAt) return void span.setAttribute('openvoice.ai.turn_outcome', 'superseded');
      const text = this.heard.join(' ');
      this.heard = [];
      if (!text) return void span.setAttribute('openvoice.ai.turn_outcome', 'no_text');
      await this.respond(text, span);
    } finally {
      span.end();
    }
  }

  private async respond(text: string, span?: Span): Promise<void> {
    if (this.finished) return;
    const asked = Date.now();
    let firstToken = true;
    let firstSentence = true;
    this.reply?.abort();
    const ctl = new AbortController();
    this.reply = ctl;
    this.state = 'thinking';
    let sentence = '';
    const speaks: Promise<unknown>[] = [];
    const voiceNow = (): AgentVoice => (this.o.voiceFor ? this.o.voiceFor(this.session.currentAi) : this.o);
    // the voice of the text in `sentence`: the AI that produced it (a team hands off mid-reply)
    let sentenceVoice = voiceNow();
    const speak = (s: string, v: AgentVoice) => {
      const clean = s.trim();
      if (!clean || ctl.signal.aborted) return;
      if (firstSentence) span?.setAttribute('openvoice.ai.first_sentence_ms', Date.now() - asked);
      this.state = 'speaking';
      this.speaking++;
      if (this.speaking === 1) this.emit('speaking');
      const first = firstSentence;
      firstSentence = false;
      // another voice than the last sentence's: it starts once that one has played
      const before = this.lastVoice && this.lastVoice !== v ? this.lastSaying : Promise.resolve();
      this.lastVoice = v;
      const speaker = v.speaker;
      if (speaker) this.speakers.add(speaker);
      const saying = speaker
        ? before
            .then(() => speaker.speak(clean, ctl.signal))
            .then(
              (s) => {
                // the first sentence's time to first audio: the vendor's share of the turn
                if (first) span?.setAttribute('openvoice.ai.tts_first_byte_ms', s.firstByteMs);
              },
              (e: Error) => {
                if (ctl.signal.aborted) return;
                this.emit('tts_error', e);
                this.finish({ kind: 'error', message: e.message });
              },
            )
        : before.then(() => this.ep.say(clean, { language: this.o.language, voice: v.voice, provider: v.ttsProvider })).catch(() => undefined);
      this.lastSaying = saying;
      speaks.push(saying.finally(() => this.speaking--));
    };
    try {
      for await (const piece of this.session.reply(text, ctl.signal)) {
        if (firstToken) span?.setAttribute('openvoice.ai.llm_first_token_ms', Date.now() - asked);
        firstToken = false;
        const v = voiceNow();
        if (v !== sentenceVoice) {
          // handed to another member: what the previous one said goes out in its voice
          speak(sentence, sentenceVoice);
          sentence = '';
          sentenceVoice = v;
        }
        sentence += piece;
        // speak each finished sentence while the rest is still being generated
        let m: RegExpExecArray | null;
        while ((m = /[.!?;:]\s+/.exec(sentence))) {
          speak(sentence.slice(0, m.index + 1), sentenceVoice);
          sentence = sentence.slice(m.index + m[0].length);
        }
      }
      speak(sentence, sentenceVoice);
      await Promise.all(speaks);
      span?.setAttribute('openvoice.ai.turn_outcome', ctl.signal.aborted ? 'barge_in' : 'answered');
    } catch (e) {
      span?.setAttribute('openvoice.ai.turn_outcome', ctl.signal.aborted ? 'barge_in' : 'error');
      if (!ctl.signal.aborted) {
        this.finish({ kind: 'error', message: (e as Error).message });
        return;
      }
    }
    if (this.reply === ctl) {
      this.reply = null;
      this.state = 'listening';
    }
    if (this.session.endRequest && !ctl.signal.aborted) this.finish(this.session.endRequest);
  }

  private finish(e: VoiceEnd): void {
    if (this.finished) return;
    this.finished = true;
    for (const t of this.timers) clearTimeout(t);
    this.reply?.abort();
    for (const w of this.textWaiters.splice(0)) w();
    if (e.kind !== 'hangup' && e.kind !== 'connect' && e.kind !== 'stop_flow') {
      void this.ep.stopPlayback().catch(() => undefined);
      for (const sp of this.speakers) void sp.stop();
    }
    this.ep.off('speech', this.onSpeech);
    if (!this.ep.destroyed) void this.ep.vadStop().catch(() => undefined);
    void this.fork?.stop().catch(() => undefined);
    this.stt?.abort();
    this.resolveEnd(e);
  }

  /** Stops the agent's speech (the stop_media tool). */
  async stopMedia(): Promise<void> {
    await this.ep.stopPlayback().catch(() => undefined);
  }
}
