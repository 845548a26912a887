/**
 * The speaking side of a voice session (media-app/ai/voice.ts): the AI session's streamed answer to a
 * caller turn, spoken sentence by sentence as the LLM produces it (a cloud voice's Speaker, or
 * endpoint.say), each turn as a span (core/tracing) with where its time went, and its latency
 * recorded once its first audio went out. What the agent does (thinking, speaking, idle) is told to
 * the turn judge (turn-judge.ts), which holds the session's state.
 */
import type { EventEmitter } from 'node:events';
import type { CallEndpoint } from '../media-server/endpoint';
import type { AiSession } from '../../core/ai/session';
import type { AimessageRow } from '../../core/repos/ai-calls';
import type { Prefetch } from '../../core/ai/prefetch';
import { platformMetrics } from '../../core/metrics';
import { activeContext, startSpan, type Span } from '../../core/tracing';
import type { Speaker } from '../voices';
import { TurnLatency, type LatencyJson, type TurnTimes } from './turn-latency';
import type { TurnJudge } from './turn-judge';
import type { AgentVoice, VoiceAgentEvents, VoiceEnd, VoiceOptions } from './voice-types';

/** One reply being spoken: its sentences, in the voice of the AI that produced each. */
interface Saying {
  readonly ctl: AbortController;
  readonly lat: TurnLatency;
  readonly span: Span | undefined;
  readonly asked: number;
  readonly speaks: Promise<unknown>[];
  first: boolean;
}

export class AgentReply {
  /** The context the agent was started in (its ai_talk action's span): each turn's span is its child. */
  private readonly traceParent = activeContext();
  private reply: AbortController | null = null;
  private speaking = 0;
  /** every cloud voice that spoke in this session (barge-in and the end silence them all) */
  private readonly speakers = new Set<Speaker>();
  /** the last sentence handed to a voice: a sentence in another voice waits for it to play out */
  private lastSaying: Promise<unknown> = Promise.resolve();
  private lastVoice: AgentVoice | null = null;

  constructor(
    private readonly ep: CallEndpoint,
    private readonly session: AiSession,
    private readonly o: VoiceOptions,
    private readonly judge: TurnJudge,
    private readonly events: EventEmitter<VoiceAgentEvents>,
    private readonly finish: (e: VoiceEnd) => void,
  ) {}

  /** Drops the reply being thought or said (barge-in): what plays is stopped. */
  cut(): void {
    this.reply?.abort();
    this.reply = null;
    this.silence();
  }

  /** The session ended: the reply's LLM request is aborted (what plays stops only by silence()). */
  abort(): void {
    this.reply?.abort();
  }

  /** Stops what the agent says now, on the endpoint and in every cloud voice. */
  silence(): void {
    void this.ep.stopPlayback().catch(() => undefined);
    for (const sp of this.speakers) void sp.stop();
  }

  /**
   * One caller turn, as a span with where its time went: the wait for the recogniser's words after
   * the speech ended, the LLM's first token, the first sentence handed to TTS.
   */
  async answer(text: string, times: TurnTimes, pre: Prefetch | null, turnStartedAt: number): Promise<void> {
    const span = startSpan('ai turn', { parent: this.traceParent, attributes: { 'openvoice.ai.caller_speech_ms': Math.max(0, (times.speechEndAt ?? 0) - turnStartedAt) } });
    try {
      span.setAttribute('openvoice.ai.stt_wait_ms', Math.max(0, (times.decidedAt ?? 0) - (times.speechEndAt ?? 0)));
      if (times.rule) span.setAttribute('openvoice.ai.end_of_turn_rule', times.rule);
      if (this.judge.ended) return void span.setAttribute('openvoice.ai.turn_outcome', 'superseded');
      if (!text) return void span.setAttribute('openvoice.ai.turn_outcome', 'no_text');
      span.setAttribute('openvoice.ai.preempted', !!pre);
      await this.respond(text, span, times, pre);
    } finally {
      span.end();
    }
  }

  /** The AI's answer to `text` ('' : its opening line), spoken as it streams. */
  async respond(text: string, span?: Span, times?: TurnTimes, pre: Prefetch | null = null): Promise<void> {
    if (this.judge.ended) return void pre?.abort();
    this.reply?.abort();
    const r: Saying = {
      ctl: new AbortController(),
      lat: new TurnLatency(times ?? { speechEndAt: null, finalAt: null, decidedAt: null, rule: null }),
      span,
      asked: Date.now(),
      speaks: [],
      first: true,
    };
    const ctl = r.ctl;
    this.reply = ctl;
    try {
      this.judge.agentIs('thinking', 'a reply is asked');
      await this.stream(text, r, pre);
      const all = Promise.all(r.speaks);
      const recorded = this.recordLatency(r.lat, Promise.race([r.lat.firstAudio, all]), ctl);
      await all;
      // cut after its first audio: the turn is recorded again, as interrupted
      if (ctl.signal.aborted)
        void recorded.then((first) => {
          if (first && !first.interrupted) void this.recordLatency(r.lat, Promise.resolve(), ctl);
        });
      span?.setAttribute('openvoice.ai.turn_outcome', ctl.signal.aborted ? 'barge_in' : 'answered');
    } catch (e) {
      span?.setAttribute('openvoice.ai.turn_outcome', ctl.signal.aborted ? 'barge_in' : 'error');
      void this.recordLatency(r.lat, Promise.resolve(), ctl);
      if (!ctl.signal.aborted) {
        this.finish({ kind: 'error', message: (e as Error).message });
        return;
      }
    }
    if (this.reply === ctl) {
      this.reply = null;
      this.judge.agentIs('idle', 'the reply was said');
    }
    if (this.session.endRequest && !ctl.signal.aborted) this.finish(this.session.endRequest);
  }

  /** The LLM's stream cut into sentences, each handed to the voice of the AI that produced it. */
  private async stream(text: string, r: Saying, pre: Prefetch | null): Promise<void> {
    let firstToken = true;
    let sentence = '';
    const voiceNow = (): AgentVoice => (this.o.voiceFor ? this.o.voiceFor(this.session.currentAi) : this.o);
    // the voice of the text in `sentence`: the AI that produced it (a team hands off mid-reply)
    let sentenceVoice = voiceNow();
    const onMessage = (row: AimessageRow) => r.lat.messageIds.push(row.id);
    // the LLM's text is complete: its last sentence is spoken at once (the session stores the messages after)
    const onTextEnd = () => {
      this.speak(r, sentence, sentenceVoice);
      sentence = '';
    };
    for await (const piece of this.session.reply(text, r.ctl.signal, { onMessage, onTextEnd, prefetched: pre })) {
      if (firstToken) r.span?.setAttribute('openvoice.ai.llm_first_token_ms', Date.now() - r.asked);
      firstToken = false;
      r.lat.llmToken();
      const v = voiceNow();
      if (v !== sentenceVoice) {
        // handed to another member: what the previous one said goes out in its voice
        this.speak(r, sentence, sentenceVoice);
        sentence = '';
        sentenceVoice = v;
      }
      sentence += piece;
      // speak each finished sentence while the rest is still being generated
      let m: RegExpExecArray | null;
      while ((m = /[.!?;:]\s+/.exec(sentence))) {
        this.speak(r, sentence.slice(0, m.index + 1), sentenceVoice);
        sentence = sentence.slice(m.index + m[0].length);
      }
    }
    this.speak(r, sentence, sentenceVoice);
  }

  /** One sentence to its voice; another voice than the last sentence's starts once that one has played. */
  private speak(r: Saying, s: string, v: AgentVoice): void {
    const clean = s.trim();
    if (!clean || r.ctl.signal.aborted) return;
    const first = r.first;
    if (first) r.span?.setAttribute('openvoice.ai.first_sentence_ms', Date.now() - r.asked);
    // the agent starts over the caller (who spoke again after the turn was judged over)
    if (first && this.judge.callerTalking) platformMetrics.aiInterruptions.labels('agent', 'caller', 'overlap').inc();
    this.judge.agentIs('speaking', 'a sentence is said');
    this.speaking++;
    if (this.speaking === 1) this.events.emit('speaking');
    r.first = false;
    const before = this.lastVoice && this.lastVoice !== v ? this.lastSaying : Promise.resolve();
    this.lastVoice = v;
    const speaker = v.speaker;
    if (speaker) this.speakers.add(speaker);
    const saying = speaker ? this.viaSpeaker(r, before, speaker, clean, first) : this.viaEndpoint(r, before, clean, v, first);
    this.lastSaying = saying;
    r.speaks.push(saying.finally(() => this.speaking--));
  }

  private viaSpeaker(r: Saying, before: Promise<unknown>, speaker: Speaker, text: string, first: boolean): Promise<unknown> {
    return before
      .then(() => speaker.speak(text, r.ctl.signal))
      .then(
        (s) => {
          // the first sentence's time to first audio: the vendor's share of the turn
          if (first) r.span?.setAttribute('openvoice.ai.tts_first_byte_ms', s.firstByteMs);
          if (first) r.lat.audio(s.firstByteMs, s.firstAudioAt);
        },
        (e: Error) => {
          if (r.ctl.signal.aborted) return;
          this.events.emit('tts_error', e);
          this.finish({ kind: 'error', message: e.message });
        },
      );
  }

  private viaEndpoint(r: Saying, before: Promise<unknown>, text: string, v: AgentVoice, first: boolean): Promise<unknown> {
    return before
      .then(async () => {
        const handed = Date.now();
        const res = await this.ep.say(text, { language: this.o.language, voice: v.voice, provider: v.ttsProvider });
        // the engine's own stamp of the first frame (the result itself may come late to a busy thread)
        if (first && res.firstFrameAt) r.lat.audio(res.firstFrameAt - handed, res.firstFrameAt);
      })
      .catch(() => undefined);
  }

  /** The turn's latency onto its assistant messages and the metrics, once its first audio went out (or it ended without). */
  private recordLatency(lat: TurnLatency, ready: Promise<unknown>, ctl: AbortController): Promise<LatencyJson | null> {
    return lat.record(ready, ctl.signal, (ids, j) => this.session.recordTurn(ids, j).catch((e: Error) => void this.events.emit('error', e)));
  }
}
