/**
 * The turn judge of a voice session (docs/ai.md "Turn-taking"): from where the VAD hears the caller's
 * speech start and stop and from the recogniser's words, when a caller turn opens, whether words over
 * the agent interrupt it (barge-in) or are a backchannel, and when the turn is over. It holds the
 * session's state (voice-moves.ts) and changes it in one guarded place, `move`; the end-of-turn wait
 * is a timer of the state that armed it (judging, overlap_judging: media-app/call/phase-timers.ts),
 * on the session's clock, so leaving that state cancels it.
 *
 * Turn-taking (core/ai/turns.ts): the VAD reports the end of speech after the shortest wait
 * (minDelayMs); the recognised words decide whether the turn is over then or after maxDelayMs (a
 * trailing "and", "uh"); speech that resumes meanwhile continues the same turn. Over the agent's
 * speech only recognised words count: backchannels ("mm-hm", "okay") are ignored, stop words and
 * other words cut the reply (barge-in) and become the next turn.
 */
import type { EventEmitter } from 'node:events';
import type { TranscriptEvent } from '../../media-engine';
import { endOfTurn, endpointingDelay, interruptionOf, type TurnSettings } from '../../core/ai/turns';
import { platformMetrics } from '../../core/metrics';
import type { Prefetch } from '../../core/ai/prefetch';
import { PhaseTimers, type PhaseTimer } from '../call/phase-timers';
import type { TurnTimes } from './turn-latency';
import type { Ducking } from './duck';
import type { VoiceAgentEvents } from './voice-types';
import { canMoveVoice, TURN_OPEN, VoiceMoveError, type AgentActivity, type VoiceClock, type VoiceState } from './voice-moves';

/** What the judge needs of its session. */
export interface TurnHost {
  readonly events: EventEmitter<VoiceAgentEvents>;
  /** the LLM asked ahead when the caller pauses after a finished sentence (preempt.ts) */
  readonly preempt: { paused(text: string): void; take(text: string): Prefetch | null; discard(): void };
  readonly duck: Ducking;
  /** Drops the reply being thought or said and silences the agent now. */
  cutReply(): void;
  /** The caller's turn is over: answer `text` (empty: no words were heard). */
  answer(text: string, times: TurnTimes, pre: Prefetch | null, turnStartedAt: number): void;
}

export interface JudgeOptions {
  turns: TurnSettings;
  language: string;
  /** how long to wait for the recogniser's words after the caller's speech ends, ms (default 4000) */
  sttWaitMs?: number;
}

export class TurnJudge {
  private st: VoiceState = 'listening';
  private agent: AgentActivity = 'idle';
  private readonly timers: PhaseTimers<VoiceState>;
  private endTimer: PhaseTimer | null = null;
  /** the agent's opening line is playing */
  greeting = false;
  /** recognised text since the current turn started */
  private heard: string[] = [];
  /** the recogniser's latest interim guess after the last final */
  private interim = '';
  private turnStartedAt = 0;
  private speechEndAt = 0;
  private lastFinalAt = 0;
  /** the recogniser's end-of-utterance flag on the last final (undefined: it has none) */
  private lastEndOfUtterance: boolean | undefined = undefined;

  constructor(
    private readonly host: TurnHost,
    private readonly o: JudgeOptions,
    private readonly clock: VoiceClock,
  ) {
    this.timers = new PhaseTimers<VoiceState>('listening', clock);
  }

  get state(): VoiceState {
    return this.st;
  }

  get ended(): boolean {
    return this.st === 'ended';
  }

  /** the VAD hears the caller now */
  get callerTalking(): boolean {
    return this.st === 'caller_turn' || this.st === 'overlap';
  }

  get agentSpeaking(): boolean {
    return this.agent === 'speaking';
  }

  private get turnOpen(): boolean {
    return TURN_OPEN.has(this.st);
  }

  /** the open turn began while the agent spoke: its words decide whether it interrupts */
  private get overlap(): boolean {
    return this.st === 'overlap' || this.st === 'overlap_judging';
  }

  /** the agent's speech may be cut now */
  private get cuttable(): boolean {
    return !this.greeting || this.o.turns.interruptibleGreeting;
  }

  /** The one change of state: checked against VOICE_MOVES; the timers of the state left are cancelled. */
  move(to: VoiceState, why: string): void {
    const from = this.st;
    if (!canMoveVoice(from, to)) throw new VoiceMoveError(from, to, why);
    this.timers.enter(to);
    this.st = to;
    this.host.events.emit('state', to, from, why);
  }

  /** The state with no caller turn open: what the agent does. */
  private idle(): VoiceState {
    return this.agent === 'idle' ? 'listening' : this.agent;
  }

  /** The agent's reply changed; with no turn open the session's state follows it. */
  agentIs(a: AgentActivity, why: string): void {
    this.agent = a;
    if (this.ended || this.turnOpen || this.st === this.idle()) return;
    this.move(this.idle(), why);
  }

  /** The session ended: no timer stays armed. */
  end(why: string): void {
    if (this.ended) return;
    this.move('ended', why);
    this.timers.end();
  }

  /** The greeting was said (or cut): words said over one that could not be cut are the caller's next turn. */
  greetingDone(): void {
    this.greeting = false;
    if (this.turnOpen && !this.callerTalking) this.scheduleEnd();
  }

  speechStarts(): void {
    if (this.ended) return;
    this.cancelEnd();
    if (!this.turnOpen) this.openTurn(true, 'speech starts');
    else this.move(this.overlap ? 'overlap' : 'caller_turn', 'speech resumes');
    if (this.overlap && this.agentSpeaking && this.cuttable) this.host.duck.speechStarted();
    this.host.events.emit('turn_start');
  }

  /** `talking`: opened by the VAD (else by words with no speech reported). */
  private openTurn(talking: boolean, why: string): void {
    this.turnStartedAt = this.clock.now();
    this.heard = [];
    this.lastFinalAt = 0;
    this.lastEndOfUtterance = undefined;
    this.interim = '';
    // energy over the agent's speech is not an interruption by itself (echo, a cough, "mm-hm"): the words decide
    if (this.agentSpeaking) this.move(talking ? 'overlap' : 'overlap_judging', why);
    else this.move(talking ? 'caller_turn' : 'judging', why);
    if (this.agent === 'thinking' && this.cuttable) {
      // the caller went on before the agent said a word: its answer is dropped
      platformMetrics.aiInterruptions.labels('caller', 'agent', 'stopped').inc();
      this.bargeIn();
    }
  }

  /** The VAD heard the speech end; `endAt`: when its audio was written (null: not known, minDelayMs ago). */
  speechStops(endAt: number | null): void {
    if (this.ended || !this.callerTalking) return;
    this.move(this.overlap ? 'overlap_judging' : 'judging', 'speech stops');
    this.speechEndAt = endAt ?? this.clock.now() - this.o.turns.minDelayMs;
    // muted with no words yet: the recogniser's final is due within its endpointing and latency
    this.host.duck.speechStopped(this.o.turns.minDelayMs + 500);
    this.scheduleEnd();
  }

  /** The caller paused (VAD): a finished sentence so far is answered ahead, not yet said. */
  paused(): void {
    if (this.ended || !this.turnOpen || this.overlap || this.agent !== 'idle') return;
    this.host.preempt.paused([...this.heard, this.interim].filter(Boolean).join(' '));
  }

  /** Caller words over the agent: drop the reply, silence the agent now. */
  private bargeIn(): void {
    this.host.preempt.discard();
    this.host.cutReply();
    this.host.duck.release();
    this.agentIs('idle', 'barge-in');
    this.host.events.emit('barge_in');
  }

  /** The recogniser's words; `endAt`: when the audio of their end was written (null: not known). */
  transcript(t: TranscriptEvent, endAt: number | null): void {
    if (this.ended || !t.text.trim()) return;
    if (!t.final) return this.onInterim(t.text.trim());
    this.interim = '';
    if (!this.turnOpen) {
      // words with no speech reported (the VAD missed it): a turn that has already ended
      this.openTurn(false, 'words without speech');
      this.speechEndAt = this.clock.now();
    }
    this.heard.push(t.text.trim());
    this.lastFinalAt = this.clock.now();
    this.lastEndOfUtterance = t.endOfUtterance;
    if (this.overlap && !this.overlapWords()) return;
    // the vendor's end of utterance after a finished sentence: its endpointing has waited for the
    // silence already, so the turn ends now and the VAD's own wait is not added on top
    if (this.st === 'caller_turn' && t.endOfUtterance === true && endOfTurn(this.heard.join(' ')) === 'complete') {
      this.move('judging', 'end of utterance');
      this.speechEndAt = endAt ?? this.clock.now();
    }
    if (!this.callerTalking) this.scheduleEnd();
  }

  /** Words of a turn that began over the agent: false when they were only a backchannel (nothing more to do). */
  private overlapWords(): boolean {
    const kind = interruptionOf(this.heard.join(' '), this.o.language);
    if (kind === 'backchannel' || kind === 'none') {
      // "mm-hm", "okay": the caller is listening, the agent goes on; the words are no turn
      platformMetrics.aiInterruptions.labels('caller', 'agent', 'ignored').inc();
      this.host.duck.release();
      this.host.events.emit('backchannel', this.heard.join(' '));
      this.heard = [];
      if (!this.callerTalking) this.move(this.idle(), 'backchannel');
      return false;
    }
    const plain = this.callerTalking ? 'caller_turn' : 'judging';
    if (this.agentSpeaking && this.cuttable) {
      platformMetrics.aiInterruptions.labels('caller', 'agent', 'stopped').inc();
      this.bargeIn();
      this.move(plain, 'barge-in: the words are a turn');
    } else if (!this.agentSpeaking) this.move(plain, 'the agent is silent: the words are a turn');
    return true;
  }

  /**
   * An interim guess: over the agent's speech a stop word in it cuts the reply at once (the final
   * that follows makes the turn); kept as the words so far for preemptive generation.
   */
  private onInterim(text: string): void {
    this.interim = text;
    if (!this.agentSpeaking || !this.cuttable) return;
    if (interruptionOf([...this.heard, text].join(' '), this.o.language) !== 'stop') return;
    platformMetrics.aiInterruptions.labels('caller', 'agent', 'stopped').inc();
    this.bargeIn();
  }

  private cancelEnd(): void {
    this.endTimer?.cancel();
    this.endTimer = null;
  }

  /**
   * The caller is silent: when is the turn over? No words yet: wait for the recogniser (sttWaitMs);
   * a finished sentence: minDelayMs after the speech ended; a trailing "and", "uh": maxDelayMs.
   */
  private scheduleEnd(): void {
    if (this.ended || this.callerTalking || !this.turnOpen) return;
    this.cancelEnd();
    // words over a greeting that may not be cut wait for it to end
    if (this.overlap && this.agentSpeaking) return;
    const now = this.clock.now();
    const text = this.heard.join(' ');
    if (!text) {
      const at = this.speechEndAt + (this.o.sttWaitMs ?? 4000);
      this.endTimer = this.timers.after(Math.max(0, at - now), () => this.endTurn(null));
      return;
    }
    // the vendor says more words of this utterance follow: wait as after a trailing word
    const { rule, delayMs } = this.lastEndOfUtterance === false ? { rule: 'continuation' as const, delayMs: this.o.turns.maxDelayMs } : endpointingDelay(text, this.o.turns, this.o.language);
    // a finished sentence the vendor called the end of an utterance: no wait of the platform's own
    const at = rule === 'complete' && this.lastEndOfUtterance === true ? now : this.speechEndAt + delayMs;
    this.endTimer = this.timers.after(Math.max(0, at - now), () => this.endTurn(rule));
  }

  private endTurn(rule: 'complete' | 'continuation' | null): void {
    this.endTimer = null;
    if (this.ended || this.callerTalking || !this.turnOpen) return;
    this.move(this.idle(), 'end of turn');
    this.host.duck.release();
    const pre = this.host.preempt.take(this.heard.join(' '));
    // answered ahead: the turn's words are those the LLM was given (the same, but for case and punctuation)
    const text = pre?.text ?? this.heard.join(' ');
    this.heard = [];
    const times: TurnTimes = { speechEndAt: this.speechEndAt, finalAt: this.lastFinalAt || null, decidedAt: this.clock.now(), rule, preempted: !!pre };
    this.host.events.emit('turn_end');
    this.host.answer(text, times, pre, this.turnStartedAt);
  }
}
