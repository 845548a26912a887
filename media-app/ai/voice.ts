/**
 * The voice loop of ai_talk on one call: a VAD (Silero in media-app's VAD thread, or the endpoint's
 * fvad tap in the media worker; each reports only where the caller's turns start and stop) drives
 * turn detection and barge-in, and the caller's audio (an 'in' fork of the endpoint) goes to a
 * streaming recogniser for the words. The media worker cancels the agent's echo in the caller's audio
 * (Endpoint.echoCancel, libspeexdsp) while the session runs; both hear the caller through the echo guard (echo-guard.ts),
 * which compares it with what the call sent (an 'out' fork) and silences the agent's own echo;
 * at the end of each caller turn the recognised text goes to the AI session, whose streamed answer
 * is spoken sentence by sentence (endpoint.say) as the LLM produces it.
 *
 * States, as in a half-duplex conversation: listening → (caller turn ends) thinking → speaking →
 * listening. Turn-taking (core/ai/turns.ts, docs/ai.md "Turn-taking"): the VAD reports the end of
 * speech after the shortest wait (minDelayMs); the recognised words decide whether the turn is
 * over then or after maxDelayMs (a trailing "and", "uh"); speech that resumes meanwhile continues
 * the same turn. Over the agent's speech only recognised words count: backchannels ("mm-hm",
 * "okay") are ignored, stop words and other words cut the reply (barge-in) and become the next turn.
 */
import { EventEmitter } from 'node:events';
import type { AudioFork, Endpoint, SpeechEvent, TranscriptEvent } from '../../media-engine';
import { Recogniser } from './recogniser';
import type { AiSession } from '../../core/ai/session';
import { endOfTurn, endpointingDelay, interruptionOf, TURN_DEFAULTS, type TurnSettings } from '../../core/ai/turns';
import type { AimessageRow } from '../../core/repos/ai-calls';
import { platformMetrics } from '../../core/metrics';
import { TurnLatency, type LatencyJson, type TurnTimes } from './turn-latency';
import { activeContext, startSpan, type Span } from '../../core/tracing';
import type { Speaker } from '../voices';
import { EchoGuard } from './echo-guard';
import { startEchoCancel, stopEchoCancel } from './echo-cancel';
import { SileroVad } from './vad/silero';
import { Preemption } from './preempt';
import { Ducking } from './duck';
import type { Prefetch } from '../../core/ai/prefetch';

import type { AgentVoice, VoiceAgentEvents, VoiceEnd, VoiceOptions } from './voice-types';
export type { AgentVoice, VoiceAgentEvents, VoiceEnd, VoiceOptions } from './voice-types';

/** silence inside a caller turn after which a finished sentence is answered ahead (at most half the short wait), ms */
const PAUSE_MS = 200;

type State = 'listening' | 'thinking' | 'speaking';

export class VoiceAgent extends EventEmitter<VoiceAgentEvents> {
  /** The context the agent was started in (its ai_talk action's span): each turn's span is its child. */
  private readonly traceParent = activeContext();
  private state: State = 'listening';
  private fork: AudioFork | null = null;
  /** what the call sends (the agent's audio): the echo guard's reference */
  private outFork: AudioFork | null = null;
  private guard: EchoGuard | null = null;
  private vad: SileroVad | null = null;
  private stt: Recogniser | null = null;
  private readonly early: Int16Array[] = [];
  /** the VAD hears the caller now */
  private inTurn = false;
  /** a caller turn is being collected (from its first speech until it is judged finished) */
  private turnOpen = false;
  /** the open turn began while the agent spoke: its words decide whether it interrupts */
  private overlap = false;
  /** the agent's opening line is playing */
  private greeting = false;
  private readonly onSpeech = (e: SpeechEvent) => (e.state === 'start' ? this.speechStarts() : this.speechStops(e.offsetMs));
  /** recognised text since the current turn started */
  private heard: string[] = [];
  /** the recogniser's latest interim guess after the last final */
  private interim = '';
  private turnStartedAt = 0;
  private speechEndAt = 0;
  private lastFinalAt = 0;
  /** the recogniser's end-of-utterance flag on the last final (undefined: it has none) */
  private lastEndOfUtterance: boolean | undefined = undefined;
  private endTimer: NodeJS.Timeout | null = null;
  private reply: AbortController | null = null;
  private speaking = 0;
  private finished = false;
  private resolveEnd!: (e: VoiceEnd) => void;
  readonly done: Promise<VoiceEnd>;
  /** every cloud voice that spoke in this session (barge-in and the end silence them all) */
  private readonly speakers = new Set<Speaker>();
  /** the last sentence handed to a voice: a sentence in another voice waits for it to play out */
  private lastSaying: Promise<unknown> = Promise.resolve();
  private lastVoice: AgentVoice | null = null;
  private timers: NodeJS.Timeout[] = [];
  private readonly turns: TurnSettings;
  /** the LLM asked ahead when the caller pauses after a finished sentence */
  private readonly preempt: Preemption;
  private readonly duck: Ducking;

  constructor(
    private readonly ep: Endpoint,
    private readonly session: AiSession,
    private readonly o: VoiceOptions,
  ) {
    super();
    this.done = new Promise((r) => (this.resolveEnd = r));
    this.on('error', () => undefined);
    this.turns = o.turns ?? TURN_DEFAULTS;
    this.preempt = new Preemption(session, o.language);
    // only a VAD behind the echo guard: fvad (in the media worker) would take the agent's echo for the caller
    this.duck = new Ducking(o.setDucked, o.vadEngine === 'webrtc' ? 0 : this.turns.minInterruptionMs, (o.startSecs ?? 0.2) * 1000);
  }

  async start(signal: AbortSignal): Promise<this> {
    // an unknown recogniser is an error of the session, never replaced by another one
    const stt = new Recogniser(this.o.sttProvider, this.o.sttFallback, {
      language: this.o.language,
      phrases: this.o.phrases?.length ? this.o.phrases : undefined,
      key: this.o.sttKey,
      endpointingMs: this.turns.minDelayMs,
    });
    const startMs = (this.o.startSecs ?? 0.2) * 1000;
    const webrtc = this.o.vadEngine === 'webrtc';
    // the VAD reports the end of speech after the shortest wait; the words decide whether to wait longer
    if (webrtc) {
      this.ep.on('speech', this.onSpeech);
      await this.ep.vadStart({ mode: 2, startMs, stopMs: this.turns.minDelayMs });
    }
    // the agent's echo taken out of the caller's audio in the media worker, before the VAD, the recogniser
    // and the guard hear it (docs/ai.md "Turn-taking", "Echo cancellation")
    if (this.o.echoCancel) await startEchoCancel(this.ep);
    // the agent's audio as the caller hears it, then the caller's: the echo guard compares them
    this.outFork = await this.ep.forkAudioStart({ mix: 'out', maxInFlight: 50, legRate: true, onFrame: (f) => this.onFarFrame(f) });
    // the caller's audio at the leg's rate (16 kHz on G.722 or Opus; the recogniser is told it), early: as its packets are read
    this.fork = await this.ep.forkAudioStart({ mix: 'in', maxInFlight: 50, legRate: true, early: true, onFrame: (f) => this.onFrame(f) });
    stt.rate = this.fork.rate === 16000 ? 16000 : 8000;
    stt.on('transcript', (t: TranscriptEvent) => this.onTranscript(t));
    stt.on('fallback', (f) => this.emit('stt_fallback', f));
    stt.on('failed', (e: Error) => {
      this.emit('stt_error', e, stt.name);
      this.finish({ kind: 'error', message: e.message });
    });
    try {
      if (!webrtc) {
        const pauseMs = Math.min(PAUSE_MS, this.turns.minDelayMs / 2);
        this.vad = await SileroVad.open({ rate: this.fork.rate === 16000 ? 16000 : 8000, startMs, stopMs: this.turns.minDelayMs, pauseMs });
        this.vad.on('speech', this.onSpeech);
        this.vad.on('pause', () => this.paused());
        this.vad.on('error', (e) => this.finish({ kind: 'error', message: `VAD: ${e.message}` }));
      }
      stt.start();
    } catch (e) {
      // a recogniser that cannot start (no key, bad language): nothing of the session stays open
      this.ep.off('speech', this.onSpeech);
      this.vad?.close();
      void this.fork.stop().catch(() => undefined);
      void this.outFork.stop().catch(() => undefined);
      stopEchoCancel(this.ep);
      if (webrtc && !this.ep.destroyed) void this.ep.vadStop().catch(() => undefined);
      this.emit('stt_error', e as Error, stt.name);
      throw e;
    }
    this.stt = stt;
    for (const f of this.early.splice(0)) this.stt.write(f);
    const onAbort = () => this.finish({ kind: 'aborted' });
    signal.addEventListener('abort', onAbort, { once: true });
    this.ep.once('destroy', () => this.finish({ kind: 'hangup' }));
    if (this.o.maxDurationMs && this.o.maxDurationMs > 0) this.timers.push(setTimeout(() => this.finish({ kind: 'duration' }), this.o.maxDurationMs));
    void this.done.then(() => signal.removeEventListener('abort', onAbort));
    // the agent speaks first (its greeting or opening line)
    this.greeting = true;
    void this.respond('').finally(() => {
      this.greeting = false;
      // words said over a greeting that could not be cut are the caller's next turn
      if (this.turnOpen && !this.inTurn) this.scheduleEnd();
    });
    return this;
  }

  /** A frame the call sent (the agent's voice, or silence). */
  private onFarFrame(frame: Int16Array): void {
    if (this.finished) return;
    this.echoGuard(frame).far20(frame);
  }

  /** A frame of the caller: the echo guard passes it on (the agent's own echo as silence) to the VAD and the recogniser. */
  private onFrame(frame: Int16Array): void {
    if (this.finished) return;
    for (const f of this.echoGuard(frame).near20(frame)) {
      this.vad?.write(f);
      // before the recogniser is made (the fork's first frames could come first): held, then written
      if (this.stt) this.stt.write(f);
      else this.early.push(f);
    }
  }

  /** Both forks run at the leg's rate: the first frame tells it (20 ms). */
  private echoGuard(frame: Int16Array): EchoGuard {
    this.guard ??= new EchoGuard(frame.length * 50);
    return this.guard;
  }

  private get agentSpeaking(): boolean {
    return this.state === 'speaking';
  }

  private speechStarts(): void {
    if (this.finished) return;
    this.inTurn = true;
    this.clearEndTimer();
    if (!this.turnOpen) this.openTurn();
    if (this.overlap && this.agentSpeaking && (!this.greeting || this.turns.interruptibleGreeting)) this.duck.speechStarted();
    this.emit('turn_start');
  }

  private openTurn(): void {
    this.turnOpen = true;
    this.turnStartedAt = Date.now();
    this.heard = [];
    this.lastFinalAt = 0;
    this.lastEndOfUtterance = undefined;
    this.interim = '';
    // energy over the agent's speech is not an interruption by itself (echo, a cough, "mm-hm"): the words decide
    this.overlap = this.agentSpeaking;
    if (this.state === 'thinking' && (!this.greeting || this.turns.interruptibleGreeting)) {
      // the caller went on before the agent said a word: its answer is dropped
      platformMetrics.aiInterruptions.labels('caller', 'agent', 'stopped').inc();
      this.bargeIn();
    }
  }

  private speechStops(offsetMs: number): void {
    if (this.finished || !this.inTurn) return;
    this.inTurn = false;
    // the VAD waited minDelayMs of silence before saying so: Silero's verdict is dated by the audio it
    // judged (it may arrive late), to 5 ms from the audio's level; the worker's fvad event by its arrival
    const vad = this.vad;
    this.speechEndAt = (vad && vad.wallTimeOf(vad.speechEndOf(offsetMs))) ?? Date.now() - this.turns.minDelayMs;
    // muted with no words yet: the recogniser's final is due within its endpointing and latency
    this.duck.speechStopped(this.turns.minDelayMs + 500);
    this.scheduleEnd();
  }

  /** The caller paused (VAD): a finished sentence so far is answered ahead, not yet said. */
  private paused(): void {
    if (this.finished || !this.turnOpen || this.overlap || this.state !== 'listening') return;
    this.preempt.paused([...this.heard, this.interim].filter(Boolean).join(' '));
  }

  /** Caller words over the agent: drop the reply, silence the agent now. */
  private bargeIn(): void {
    this.preempt.discard();
    this.reply?.abort();
    this.reply = null;
    void this.ep.stopPlayback().catch(() => undefined);
    for (const sp of this.speakers) void sp.stop();
    this.duck.release();
    this.state = 'listening';
    this.emit('barge_in');
  }

  private onTranscript(t: TranscriptEvent): void {
    if (this.finished || !t.text.trim()) return;
    if (!t.final) return this.onInterim(t.text.trim());
    this.interim = '';
    if (!this.turnOpen) {
      // words with no speech reported (the VAD missed it): a turn that has already ended
      this.openTurn();
      this.speechEndAt = Date.now();
    }
    this.heard.push(t.text.trim());
    this.lastFinalAt = Date.now();
    this.lastEndOfUtterance = t.endOfUtterance;
    if (this.overlap) {
      const kind = interruptionOf(this.heard.join(' '), this.o.language);
      if (kind === 'backchannel' || kind === 'none') {
        // "mm-hm", "okay": the caller is listening, the agent goes on; the words are no turn
        platformMetrics.aiInterruptions.labels('caller', 'agent', 'ignored').inc();
        this.duck.release();
        this.emit('backchannel', this.heard.join(' '));
        this.heard = [];
        if (!this.inTurn) this.turnOpen = false;
        return;
      }
      if (this.agentSpeaking && (!this.greeting || this.turns.interruptibleGreeting)) {
        platformMetrics.aiInterruptions.labels('caller', 'agent', 'stopped').inc();
        this.bargeIn();
        this.overlap = false;
      } else if (!this.agentSpeaking) this.overlap = false;
    }
    // the vendor's end of utterance after a finished sentence: its endpointing has waited for the
    // silence already, so the turn ends now and the VAD's own wait is not added on top
    if (this.inTurn && t.endOfUtterance === true && !this.overlap && endOfTurn(this.heard.join(' ')) === 'complete') {
      this.inTurn = false;
      this.speechEndAt = this.stt?.wallTimeOf(t.offsetMs + t.durationMs) ?? Date.now();
    }
    if (!this.inTurn) this.scheduleEnd();
  }

  /**
   * An interim guess: over the agent's speech a stop word in it cuts the reply at once (the final
   * that follows makes the turn); kept as the words so far for preemptive generation.
   */
  private onInterim(text: string): void {
    this.interim = text;
    if (!this.agentSpeaking || (this.greeting && !this.turns.interruptibleGreeting)) return;
    if (interruptionOf([...this.heard, text].join(' '), this.o.language) !== 'stop') return;
    platformMetrics.aiInterruptions.labels('caller', 'agent', 'stopped').inc();
    this.bargeIn();
  }

  private clearEndTimer(): void {
    if (this.endTimer) clearTimeout(this.endTimer);
    this.endTimer = null;
  }

  /**
   * The caller is silent: when is the turn over? No words yet: wait for the recogniser (sttWaitMs);
   * a finished sentence: minDelayMs after the speech ended; a trailing "and", "uh": maxDelayMs.
   */
  private scheduleEnd(): void {
    if (this.finished || this.inTurn || !this.turnOpen) return;
    this.clearEndTimer();
    // words over a greeting that may not be cut wait for it to end
    if (this.overlap && this.agentSpeaking) return;
    const text = this.heard.join(' ');
    if (!text) {
      const at = this.speechEndAt + (this.o.sttWaitMs ?? 4000);
      this.endTimer = setTimeout(() => this.endTurn(null), Math.max(0, at - Date.now()));
      return;
    }
    // the vendor says more words of this utterance follow: wait as after a trailing word
    const { rule, delayMs } = this.lastEndOfUtterance === false ? { rule: 'continuation' as const, delayMs: this.turns.maxDelayMs } : endpointingDelay(text, this.turns, this.o.language);
    // a finished sentence the vendor called the end of an utterance: no wait of the platform's own
    const at = rule === 'complete' && this.lastEndOfUtterance === true ? Date.now() : this.speechEndAt + delayMs;
    this.endTimer = setTimeout(() => this.endTurn(rule), Math.max(0, at - Date.now()));
  }

  private endTurn(rule: 'complete' | 'continuation' | null): void {
    this.endTimer = null;
    if (this.finished || this.inTurn || !this.turnOpen) return;
    this.turnOpen = false;
    this.overlap = false;
    this.duck.release();
    const pre = this.preempt.take(this.heard.join(' '));
    // answered ahead: the turn's words are those the LLM was given (the same, but for case and punctuation)
    const text = pre?.text ?? this.heard.join(' ');
    this.heard = [];
    const times: TurnTimes = { speechEndAt: this.speechEndAt, finalAt: this.lastFinalAt || null, decidedAt: Date.now(), rule, preempted: !!pre };
    this.emit('turn_end');
    void this.takeTurn(text, times, pre);
  }

  /**
   * One caller turn, as a span (core/tracing) with where its time went: the wait for the recogniser's
   * words after the speech ended, the LLM's first token, the first sentence handed to TTS.
   */
  private async takeTurn(text: string, times: TurnTimes, pre: Prefetch | null): Promise<void> {
    const span = startSpan('ai turn', { parent: this.traceParent, attributes: { 'openvoice.ai.caller_speech_ms': Math.max(0, (times.speechEndAt ?? 0) - this.turnStartedAt) } });
    try {
      span.setAttribute('openvoice.ai.stt_wait_ms', Math.max(0, (times.decidedAt ?? 0) - (times.speechEndAt ?? 0)));
      if (times.rule) span.setAttribute('openvoice.ai.end_of_turn_rule', times.rule);
      if (this.finished) return void span.setAttribute('openvoice.ai.turn_outcome', 'superseded');
      if (!text) return void span.setAttribute('openvoice.ai.turn_outcome', 'no_text');
      span.setAttribute('openvoice.ai.preempted', !!pre);
      await this.respond(text, span, times, pre);
    } finally {
      span.end();
    }
  }

  private async respond(text: string, span?: Span, times?: TurnTimes, pre: Prefetch | null = null): Promise<void> {
    if (this.finished) return void pre?.abort();
    const asked = Date.now();
    const lat = new TurnLatency(times ?? { speechEndAt: null, finalAt: null, decidedAt: null, rule: null });
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
      // the agent starts over the caller (who spoke again after the turn was judged over)
      if (firstSentence && this.inTurn) platformMetrics.aiInterruptions.labels('agent', 'caller', 'overlap').inc();
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
                if (first) lat.audio(s.firstByteMs, s.firstAudioAt);
              },
              (e: Error) => {
                if (ctl.signal.aborted) return;
                this.emit('tts_error', e);
                this.finish({ kind: 'error', message: e.message });
              },
            )
        : before
            .then(async () => {
              const handed = Date.now();
              const r = await this.ep.say(clean, { language: this.o.language, voice: v.voice, provider: v.ttsProvider });
              // the engine's own stamp of the first frame (the result itself may come late to a busy thread)
              if (first && r.firstFrameAt) lat.audio(r.firstFrameAt - handed, r.firstFrameAt);
            })
            .catch(() => undefined);
      this.lastSaying = saying;
      speaks.push(saying.finally(() => this.speaking--));
    };
    const onMessage = (row: AimessageRow) => lat.messageIds.push(row.id);
    // the LLM's text is complete: its last sentence is spoken at once (the session stores the messages after)
    const onTextEnd = () => {
      speak(sentence, sentenceVoice);
      sentence = '';
    };
    try {
      for await (const piece of this.session.reply(text, ctl.signal, { onMessage, onTextEnd, prefetched: pre })) {
        if (firstToken) span?.setAttribute('openvoice.ai.llm_first_token_ms', Date.now() - asked);
        firstToken = false;
        lat.llmToken();
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
      const all = Promise.all(speaks);
      const recorded = this.recordLatency(lat, Promise.race([lat.firstAudio, all]), ctl);
      await all;
      // cut after its first audio: the turn is recorded again, as interrupted
      if (ctl.signal.aborted)
        void recorded.then((first) => {
          if (first && !first.interrupted) void this.recordLatency(lat, Promise.resolve(), ctl);
        });
      span?.setAttribute('openvoice.ai.turn_outcome', ctl.signal.aborted ? 'barge_in' : 'answered');
    } catch (e) {
      span?.setAttribute('openvoice.ai.turn_outcome', ctl.signal.aborted ? 'barge_in' : 'error');
      void this.recordLatency(lat, Promise.resolve(), ctl);
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

  /** The turn's latency onto its assistant messages and the metrics, once its first audio went out (or it ended without). */
  private recordLatency(lat: TurnLatency, ready: Promise<unknown>, ctl: AbortController): Promise<LatencyJson | null> {
    return lat.record(ready, ctl.signal, (ids, j) => this.session.recordTurn(ids, j).catch((e: Error) => void this.emit('error', e)));
  }

  private finish(e: VoiceEnd): void {
    if (this.finished) return;
    this.finished = true;
    for (const t of this.timers) clearTimeout(t);
    this.reply?.abort();
    this.preempt.discard();
    this.duck.release();
    this.clearEndTimer();
    if (e.kind !== 'hangup' && e.kind !== 'connect' && e.kind !== 'stop_flow') {
      void this.ep.stopPlayback().catch(() => undefined);
      for (const sp of this.speakers) void sp.stop();
    }
    this.ep.off('speech', this.onSpeech);
    if (this.vad) this.vad.close();
    else if (!this.ep.destroyed) void this.ep.vadStop().catch(() => undefined);
    void this.fork?.stop().catch(() => undefined);
    void this.outFork?.stop().catch(() => undefined);
    stopEchoCancel(this.ep);
    this.stt?.abort();
    this.resolveEnd(e);
  }

  /** Stops the agent's speech (the stop_media tool). */
  async stopMedia(): Promise<void> {
    await this.ep.stopPlayback().catch(() => undefined);
  }
}
