/**
 * The voice loop of ai_talk on one call: a VAD (Silero in media-app's VAD thread, or the endpoint's
 * fvad tap in the media worker; each reports only where the caller's turns start and stop) drives
 * turn detection and barge-in, and the caller's audio (an 'in' fork of the endpoint) goes to a
 * streaming recogniser for the words. The media worker cancels the agent's echo in the caller's audio
 * (CallEndpoint.echoCancel, libspeexdsp) while the session runs; both hear the caller through the echo guard (echo-guard.ts),
 * which compares it with what the call sent (an 'out' fork) and silences the agent's own echo;
 * at the end of each caller turn the recognised text goes to the AI session, whose streamed answer
 * is spoken sentence by sentence (endpoint.say) as the LLM produces it.
 *
 * This file owns the session's media (forks, VAD, recogniser, echo guard) and its life (start, the
 * duration cap, the end). When a turn opens and ends, and barge-in, are the turn judge's
 * (turn-judge.ts), whose states and one table of moves are voice-moves.ts; the reply spoken is
 * voice-reply.ts's; the agent silenced while the caller talks over it, duck.ts's. Every timer is on
 * the session's clock (VoiceOptions.clock), owned by the state or the life that armed it.
 */
import { EventEmitter } from 'node:events';
import type { SpeechEvent, TranscriptEvent } from '../../media-engine';
import type { CallEndpoint } from '../media-server/endpoint';
import type { MediaFork } from '../media-server/tap';
import { Recogniser } from './recogniser';
import type { AiSession } from '../../core/ai/session';
import { TURN_DEFAULTS, type TurnSettings } from '../../core/ai/turns';
import { EchoGuard } from './echo-guard';
import { startEchoCancel, stopEchoCancel } from './echo-cancel';
import { SileroVad } from './vad/silero';
import { Preemption } from './preempt';
import { Ducking } from './duck';
import { PhaseTimers } from '../call/phase-timers';
import { TurnJudge } from './turn-judge';
import { AgentReply } from './voice-reply';
import { realVoiceClock, VoiceMoveError, type VoiceClock, type VoiceState } from './voice-moves';

import type { VoiceAgentEvents, VoiceEnd, VoiceOptions } from './voice-types';
export type { AgentVoice, VoiceAgentEvents, VoiceEnd, VoiceOptions } from './voice-types';

/** silence inside a caller turn after which a finished sentence is answered ahead (at most half the short wait), ms */
const PAUSE_MS = 200;

/**
 * Frames each of the agent's forks may have unacknowledged before the media worker drops: 500, 10 s.
 * Their consumers are synchronous, so frames wait only while this process's event loop is held up (at
 * 50 calls starting at once it stalled ~1 s); at the forks' default (50, 1 s) the worker then dropped
 * the caller's first words (docs/evals.md "Performance"). A stall ends, so the frames are bounded
 * (320 KB a fork at 16 kHz) and caught up with at once.
 */
export const AGENT_FORK_MAX_IN_FLIGHT = 500;

export class VoiceAgent extends EventEmitter<VoiceAgentEvents> {
  private fork: MediaFork | null = null;
  /** what the call sends (the agent's audio): the echo guard's reference */
  private outFork: MediaFork | null = null;
  private guard: EchoGuard | null = null;
  private vad: SileroVad | null = null;
  private stt: Recogniser | null = null;
  private readonly early: Int16Array[] = [];
  private readonly onSpeech = (e: SpeechEvent) => this.guarded(() => (e.state === 'start' ? this.judge.speechStarts() : this.speechStops(e.offsetMs)));
  private resolveEnd!: (e: VoiceEnd) => void;
  readonly done: Promise<VoiceEnd>;
  private readonly turns: TurnSettings;
  private readonly clock: VoiceClock;
  /** the session's own timers (its duration cap): they end with it */
  private readonly life: PhaseTimers<'live'>;
  private readonly judge: TurnJudge;
  private readonly reply: AgentReply;
  private readonly duck: Ducking;
  /** the LLM asked ahead when the caller pauses after a finished sentence */
  private readonly preempt: Preemption;

  constructor(
    private readonly ep: CallEndpoint,
    session: AiSession,
    private readonly o: VoiceOptions,
  ) {
    super();
    this.done = new Promise((r) => (this.resolveEnd = r));
    this.on('error', () => undefined);
    this.turns = o.turns ?? TURN_DEFAULTS;
    this.clock = o.clock ?? realVoiceClock;
    this.life = new PhaseTimers<'live'>('live', this.clock);
    this.preempt = new Preemption(session, o.language);
    // only a VAD behind the echo guard: fvad (in the media worker) would take the agent's echo for the caller
    this.duck = new Ducking(o.setDucked, o.vadEngine === 'webrtc' ? 0 : this.turns.minInterruptionMs, (o.startSecs ?? 0.2) * 1000, this.clock);
    this.judge = new TurnJudge(
      {
        events: this,
        preempt: this.preempt,
        duck: this.duck,
        cutReply: () => this.reply.cut(),
        answer: (text, times, pre, startedAt) => void this.reply.answer(text, times, pre, startedAt),
      },
      { turns: this.turns, language: o.language, sttWaitMs: o.sttWaitMs },
      this.clock,
    );
    this.reply = new AgentReply(ep, session, o, this.judge, this, (e) => this.finish(e));
  }

  /** The turn-taking state (voice-moves.ts). */
  get state(): VoiceState {
    return this.judge.state;
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
    this.outFork = await this.ep.forkAudioStart({ mix: 'out', maxInFlight: AGENT_FORK_MAX_IN_FLIGHT, legRate: true, onFrame: (f) => this.onFarFrame(f) });
    // the caller's audio at the leg's rate (16 kHz on G.722 or Opus; the recogniser is told it), early: as its packets are read
    this.fork = await this.ep.forkAudioStart({ mix: 'in', maxInFlight: AGENT_FORK_MAX_IN_FLIGHT, legRate: true, early: true, onFrame: (f) => this.onFrame(f) });
    stt.rate = this.fork.rate === 16000 ? 16000 : 8000;
    stt.on('transcript', (t: TranscriptEvent) => this.guarded(() => this.judge.transcript(t, this.stt?.wallTimeOf(t.offsetMs + t.durationMs) ?? null)));
    stt.on('fallback', (f) => this.emit('stt_fallback', f));
    stt.on('failed', (e: Error) => {
      this.emit('stt_error', e, stt.name);
      this.finish({ kind: 'error', message: e.message });
    });
    try {
      if (!webrtc) await this.openSilero(this.fork.rate === 16000 ? 16000 : 8000, startMs);
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
    this.live(signal);
    return this;
  }

  /** Silero in media-app's VAD thread, behind the echo guard. */
  private async openSilero(rate: 8000 | 16000, startMs: number): Promise<void> {
    const pauseMs = Math.min(PAUSE_MS, this.turns.minDelayMs / 2);
    this.vad = await SileroVad.open({ rate, startMs, stopMs: this.turns.minDelayMs, pauseMs });
    this.vad.on('speech', this.onSpeech);
    this.vad.on('pause', () => this.guarded(() => this.judge.paused()));
    this.vad.on('error', (e) => this.finish({ kind: 'error', message: `VAD: ${e.message}` }));
  }

  /** The session runs: its ends are armed, and the agent speaks first (its greeting or opening line). */
  private live(signal: AbortSignal): void {
    const onAbort = () => this.finish({ kind: 'aborted' });
    signal.addEventListener('abort', onAbort, { once: true });
    this.ep.once('destroy', () => this.finish({ kind: 'hangup' }));
    if (this.o.maxDurationMs && this.o.maxDurationMs > 0) this.life.after(this.o.maxDurationMs, () => this.finish({ kind: 'duration' }));
    void this.done.then(() => signal.removeEventListener('abort', onAbort));
    this.judge.greeting = true;
    void this.reply.respond('').finally(() => this.guarded(() => this.judge.greetingDone()));
  }

  /**
   * Runs one input of the session (a VAD verdict, the recogniser's words) through the judge. A move
   * the table refuses is a fault of the session's logic: said as an error, and the session ends with it
   * (no input may end the process).
   */
  private guarded(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      if (!(e instanceof VoiceMoveError)) throw e;
      this.emit('error', e);
      this.finish({ kind: 'error', message: e.message });
    }
  }

  /** A frame the call sent (the agent's voice, or silence): the caller's frames that waited for it go on. */
  private onFarFrame(frame: Int16Array): void {
    if (this.judge.ended) return;
    for (const f of this.echoGuard(frame).far20(frame)) this.hear(f);
  }

  /** A frame of the caller: the echo guard passes it on (the agent's own echo as silence) to the VAD and the recogniser. */
  private onFrame(frame: Int16Array): void {
    if (this.judge.ended) return;
    for (const f of this.echoGuard(frame).near20(frame)) this.hear(f);
  }

  private hear(f: Int16Array): void {
    this.vad?.write(f);
    // before the recogniser is made (the fork's first frames could come first): held, then written
    if (this.stt) this.stt.write(f);
    else this.early.push(f);
  }

  /** Both forks run at the leg's rate: the first frame tells it (20 ms). */
  private echoGuard(frame: Int16Array): EchoGuard {
    this.guard ??= new EchoGuard(frame.length * 50);
    return this.guard;
  }

  private speechStops(offsetMs: number): void {
    // the VAD waited minDelayMs of silence before saying so: Silero's verdict is dated by the audio it
    // judged (it may arrive late), to 5 ms from the audio's level; the worker's fvad event by its arrival
    const vad = this.vad;
    this.judge.speechStops((vad && vad.wallTimeOf(vad.speechEndOf(offsetMs))) ?? null);
  }

  private finish(e: VoiceEnd): void {
    if (this.judge.ended) return;
    this.judge.end(e.kind);
    this.life.end();
    this.reply.abort();
    this.preempt.discard();
    this.duck.end();
    if (e.kind !== 'hangup' && e.kind !== 'connect' && e.kind !== 'stop_flow') this.reply.silence();
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
