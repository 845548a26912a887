/**
 * One ConversationRelay session on a call (conversation_relay, TwiML <Connect><ConversationRelay>):
 * the app's WebSocket is already open (relay-socket.ts); this sends `setup`, speaks the welcome
 * greeting, then relays until the app sends `end`, closes the socket, or the call ends.
 *
 * - Caller → app: one SpeechListener after another (media-app/speech/gather.ts: the endpoint's VAD
 *   and the recogniser); each answer is a `prompt` {voicePrompt, lang, last: true}. With
 *   dtmf_detection each key is a `dtmf` message.
 * - App → caller: `text` tokens are collected and spoken (`say`: a local or cloud voice) a sentence at a
 *   time (at . ! ? ; : or `last`), `play` plays its URL `loop` times, in arrival order; `sendDigits`
 *   sends RFC 4733 digits; `language` switches the voice and the recogniser (the session's
 *   <Language> entries); `end` ends the session with its handoffData.
 * - Barge-in: the caller's speech (VAD start) or a key, as `interruptible` allows (the message's own
 *   flag: true = any, false = none), stops what plays, drops what is queued and sends `interrupt`
 *   with the text whose speech had started since the agent began speaking and the ms since then.
 * - A bad app message is answered with an `error` message (Twilio's 64107) and dropped; the session goes on.
 * - Each reply of the app (its `text` tokens up to `last`, the welcome greeting) is written once its text
 *   is whole (relay-lines.ts): a reply the caller cuts is marked interrupted, and tokens cut short before
 *   their `last` are written then, interrupted; tokens after a cut start the next reply. A reply is kept
 *   (spoken and written) up to RELAY_LINE_MAX_CHARS: later tokens of it are dropped and counted, so the
 *   call's record says its agent transcript is incomplete (relay_line_losses) and a runaway app streaming
 *   tokens without end cannot grow the session's memory.
 * - The say queue holds at most RELAY_SAY_QUEUE_MAX_CHARS: a reply that does not fit is dropped from there on
 *   (not spoken, not written), counted lost and the app is sent an `error`.
 */
import type { Logger } from 'pino';
import type { RawData, WebSocket } from 'ws';
import type { z } from 'zod';
import type { conversation_relay } from '../../core/flow/options/conversation-relay';
import { rawText } from '../../core/net/ws-text';
import { parseAppMessage, setupMessage, type RelayIn, type RelayOut, type SetupFields } from '../../core/twilio/relay-protocol';
import type { CallPort } from '../flow/call-port';
import type { SpeechListener } from '../speech/gather';
import { clock } from '../../core/clock';
import { RELAY_LINE_MAX_CHARS } from '../../core/repos/relay-lines';
import type { RelayLineSink } from './relay-lines';

type Option = z.infer<typeof conversation_relay>;
type Mode = 'any' | 'speech' | 'dtmf' | 'none';

export interface RelayEnd {
  /** ended: the app sent `end`; completed: the app closed the socket; hangup: the call ended. */
  status: 'ended' | 'completed' | 'hangup';
  handoffData: string;
}

export interface RelayDeps {
  ws: WebSocket;
  call: CallPort;
  /** A listener for the caller's next answer; null when the call has no media here. */
  listen: (language: string, provider: string, phrases: string[] | undefined) => Promise<SpeechListener | null>;
  /** Speaks one sentence with this voice (a local one through the call, a cloud one through its Speaker); resolves when played or `signal` aborts. */
  say: (text: string, language: string, tts: { provider?: string; voice?: string }, signal: AbortSignal) => Promise<void>;
  setup: SetupFields;
  logger: Logger;
  /** Aborts when the flow is stopped or the call hangs up. */
  signal: AbortSignal;
  /** Each refused app message (for the activeflow's trace). */
  onBadMessage: (problem: string) => void;
  /** Where the app's replies are written (relay_lines). */
  lines: RelayLineSink;
}

/**
 * One reply of the app: its text so far (at most RELAY_LINE_MAX_CHARS), the characters of its tokens dropped
 * past that, when its first token came, its row once written, whether the caller cut it.
 */
interface Reply {
  text: string;
  dropped: number;
  at: Date;
  written: { cut(): void } | null;
  cut: boolean;
  /** the say queue was full for a part of it: nothing more of it is kept */
  refused?: boolean;
}

type Item = { kind: 'say'; text: string; mode: Mode; lang: string; reply: Reply } | { kind: 'play'; url: string; loop: number; mode: Mode };

/**
 * Text waiting to be spoken, at most (characters of the queued sentences; a queued play counts its URL):
 * a whole reply (RELAY_LINE_MAX_CHARS) always fits behind another. Twilio queues text sent while it speaks
 * (`preemptible` aside) and documents no bound; an app sending replies faster than they can be spoken would
 * grow the queue and the caller's wait without end. Past it the reply's text is dropped (not spoken, not a
 * line), counted lost (relay_line_losses) and the app is sent an `error`.
 */
export const RELAY_SAY_QUEUE_MAX_CHARS = 2 * RELAY_LINE_MAX_CHARS;

const SENTENCE_END = /[.!?;:]["')\]]?\s*$/;

/** An item's share of RELAY_SAY_QUEUE_MAX_CHARS. */
const weight = (i: Item): number => (i.kind === 'say' ? i.text.length : i.url.length);

const modeOf = (flag: boolean | undefined, dflt: Mode): Mode => (flag === undefined ? dflt : flag ? 'any' : 'none');

export class RelayConversation {
  private ttsLanguage: string;
  private sttLanguage: string;
  private ttsProvider: string | undefined;
  private voice: string | undefined;
  private sttProvider: string;
  private readonly queue: Item[] = [];
  /** what the queue holds, in characters (RELAY_SAY_QUEUE_MAX_CHARS) */
  private queued = 0;
  private tokens = '';
  private tokenMode: Mode;
  /** the reply whose tokens are coming (until its `last`) */
  private reply: Reply | null = null;
  private playing: { item: Item; stop: AbortController } | null = null;
  /** since the agent began speaking (idle → speaking): when, and the text whose speech started */
  private turn: { at: number; said: string[] } | null = null;
  private listener: SpeechListener | null = null;
  private finished: RelayEnd | null = null;
  private resolveEnd: (e: RelayEnd) => void = () => undefined;
  private readonly ended: Promise<RelayEnd>;
  private working = false;

  constructor(
    private readonly d: RelayDeps,
    private readonly o: Option,
  ) {
    const lang = o.language ?? 'en-US';
    this.ttsLanguage = o.tts_language ?? lang;
    this.sttLanguage = o.transcription_language ?? lang;
    this.ttsProvider = o.tts_provider;
    this.voice = o.voice;
    this.sttProvider = o.stt_provider ?? '';
    this.tokenMode = o.interruptible ?? 'any';
    this.ended = new Promise((r) => (this.resolveEnd = r));
  }

  private get mode(): Mode {
    return this.o.interruptible ?? 'any';
  }

  /** Runs the session to its end; the socket is closed after. */
  async run(): Promise<RelayEnd> {
    const { ws, call, signal } = this.d;
    const onAbort = () => this.finish({ status: 'hangup', handoffData: '' });
    const onDtmf = (digit: string) => this.onDigit(digit);
    signal.addEventListener('abort', onAbort, { once: true });
    ws.on('message', (data: RawData, isBinary: boolean) => this.onMessage(data, isBinary));
    ws.on('close', () => this.finish({ status: 'completed', handoffData: '' }));
    call.on('dtmf', onDtmf);
    try {
      this.send(setupMessage(this.d.setup));
      if (this.o.welcome_greeting) {
        const reply = this.written({ text: this.o.welcome_greeting, dropped: 0, at: clock.now(), written: null, cut: false });
        this.enqueue({ kind: 'say', text: this.o.welcome_greeting, mode: this.o.welcome_greeting_interruptible ?? this.mode, lang: this.ttsLanguage, reply });
      }
      void this.listenLoop();
      return await this.ended;
    } finally {
      signal.removeEventListener('abort', onAbort);
      call.off('dtmf', onDtmf);
      this.closeReply();
      this.listener?.abort();
      this.stopSpeech();
      if (ws.readyState === ws.OPEN) ws.close(1000, 'session ended');
      else ws.terminate();
    }
  }

  private finish(e: RelayEnd): void {
    if (this.finished) return;
    this.finished = e;
    this.resolveEnd(e);
  }

  private send(m: RelayOut): void {
    const ws = this.d.ws;
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(m));
  }

  private async listenLoop(): Promise<void> {
    while (!this.finished) {
      let l: SpeechListener | null;
      try {
        l = await this.d.listen(this.sttLanguage, this.sttProvider, this.o.phrases);
      } catch (e) {
        this.send({ type: 'error', description: `speech recognition could not start: ${(e as Error).message}` });
        this.d.logger.warn({ err: (e as Error).message }, 'conversation relay: the recogniser could not start');
        return;
      }
      if (!l) {
        if (!this.finished) this.send({ type: 'error', description: 'speech recognition could not start: the call has no media on this node' });
        return;
      }
      if (this.finished) return l.abort();
      this.listener = l;
      l.on('speech_start', () => this.bargeIn('speech'));
      const heard = await l.result;
      this.listener = null;
      if (this.finished) return;
      if (heard.text) this.send({ type: 'prompt', voicePrompt: heard.text, lang: this.sttLanguage, last: true });
    }
  }

  private onDigit(digit: string): void {
    if (this.finished) return;
    if (this.o.dtmf_detection) this.send({ type: 'dtmf', digit });
    this.bargeIn('dtmf');
  }

  /** The caller cut in: stops what plays (if its mode allows), drops the queue, tells the app. */
  private bargeIn(by: 'speech' | 'dtmf'): void {
    const p = this.playing;
    if (!p || !this.turn) return;
    const mode = p.item.mode;
    if (mode === 'none' || (mode !== 'any' && mode !== by)) return;
    const utterance = this.turn.said.join(' ');
    const ms = Math.round(performance.now() - this.turn.at);
    this.cutReplies([p.item, ...this.queue]);
    this.queue.length = 0;
    this.queued = 0;
    this.tokens = '';
    this.stopSpeech();
    this.turn = null;
    this.send({ type: 'interrupt', utteranceUntilInterrupt: utterance, durationUntilInterruptMs: ms });
  }

  /** The replies of these items and the one still coming are cut: marked (or written) interrupted. */
  private cutReplies(items: Item[]): void {
    const replies = new Set(items.flatMap((i) => (i.kind === 'say' ? [i.reply] : [])));
    for (const r of replies) {
      if (r.cut) continue;
      r.cut = true;
      r.written?.cut();
    }
    if (this.reply) this.reply.cut = true;
    this.closeReply();
  }

  /** Writes the reply whose tokens were coming, if it has text; the next token starts another. */
  private closeReply(): void {
    const r = this.reply;
    this.reply = null;
    if (!r || r.written) return;
    if (r.text.trim()) this.written(r);
    else if (r.dropped > 0) this.d.lines.lose(r.dropped);
  }

  private written(r: Reply): Reply {
    r.written = this.d.lines.write(r.text.trim(), r.at, r.cut, r.dropped);
    return r;
  }

  private stopSpeech(): void {
    this.playing?.stop.abort(new Error('interrupted'));
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    if (this.finished) return;
    if (isBinary) return this.refuse('binary frames are not part of the protocol');
    const parsed = parseAppMessage(rawText(data));
    if (!parsed.ok) return this.refuse(parsed.problem);
    this.handle(parsed.msg);
  }

  private refuse(problem: string): void {
    this.d.onBadMessage(problem);
    this.send({ type: 'error', description: `Invalid message received (64107): ${problem}` });
  }

  private handle(m: RelayIn): void {
    switch (m.type) {
      case 'text': {
        if (!this.tokens) this.tokenMode = modeOf(m.interruptible, this.mode);
        const reply = (this.reply ??= { text: '', dropped: 0, at: clock.now(), written: null, cut: false });
        // the reply is kept up to RELAY_LINE_MAX_CHARS; the rest is dropped, counted (this.tokens is part of it)
        const token = reply.refused ? '' : m.token.slice(0, RELAY_LINE_MAX_CHARS - reply.text.length);
        reply.dropped += m.token.length - token.length;
        this.tokens += token;
        reply.text += token;
        // a full reply speaks what it kept at once: nothing more of it will come
        if (m.last || SENTENCE_END.test(this.tokens) || (reply.dropped > 0 && this.tokens)) {
          const part = this.tokens;
          this.tokens = '';
          if (part.trim()) this.sayPart(reply, part, m.lang ?? this.ttsLanguage);
        }
        if (m.last) this.closeReply();
        return;
      }
      case 'play':
        if (this.queued + m.source.length > RELAY_SAY_QUEUE_MAX_CHARS)
          return this.send({ type: 'error', description: `the say queue is full (${this.queued} characters waiting): the play was dropped` });
        return this.enqueue({ kind: 'play', url: m.source, loop: m.loop === 0 ? 1000 : m.loop, mode: modeOf(m.interruptible, this.mode) });
      case 'sendDigits':
        void this.d.call
          .sendDigits({ digits: m.digits.toLowerCase(), duration: 100, interval: 100 }, this.d.signal)
          .catch((e: Error) => this.d.logger.info({ err: e.message }, 'conversation relay: sendDigits failed'));
        return;
      case 'language':
        return this.switchLanguage(m.ttsLanguage, m.transcriptionLanguage);
      case 'end':
        return this.finish({ status: 'ended', handoffData: m.handoffData });
    }
  }

  private switchLanguage(tts: string | undefined, stt: string | undefined): void {
    const entry = (code: string) => this.o.languages?.find((l) => l.code.toLowerCase() === code.toLowerCase());
    if (tts) {
      this.ttsLanguage = tts;
      const e = entry(tts);
      if (e?.tts_provider) this.ttsProvider = e.tts_provider;
      if (e?.voice) this.voice = e.voice;
    }
    if (stt) {
      const e = entry(stt);
      const provider = e?.stt_provider ?? this.sttProvider;
      if ((provider || 'pocketsphinx') === 'pocketsphinx' && !stt.toLowerCase().startsWith('en')) {
        this.send({ type: 'error', description: `transcription language ${stt} needs the Deepgram recogniser (pocketsphinx is English only)` });
        return;
      }
      this.sttLanguage = stt;
      this.sttProvider = provider;
    }
  }

  /**
   * A part of the reply whose tokens are coming, whole (a sentence, its `last`): queued to be spoken, or,
   * the queue full, dropped with the rest of the reply (its text is what was queued; the app is told once).
   */
  private sayPart(reply: Reply, part: string, lang: string): void {
    const text = part.trim();
    if (this.queued + text.length <= RELAY_SAY_QUEUE_MAX_CHARS) return this.enqueue({ kind: 'say', text, mode: this.tokenMode, lang, reply });
    reply.text = reply.text.slice(0, reply.text.length - part.length);
    reply.dropped += part.length;
    reply.refused = true;
    this.send({ type: 'error', description: `the say queue is full (${this.queued} characters waiting): the reply's text was dropped` });
  }

  private enqueue(item: Item): void {
    this.queue.push(item);
    this.queued += weight(item);
    if (!this.working) void this.work();
  }

  /** Plays the queue in order until it is empty (or the session ends). */
  private async work(): Promise<void> {
    this.working = true;
    try {
      for (let item = this.queue.shift(); item && !this.finished; item = this.queue.shift()) {
        this.queued -= weight(item);
        const stop = new AbortController();
        this.playing = { item, stop };
        this.turn ??= { at: performance.now(), said: [] };
        if (item.kind === 'say') this.turn.said.push(item.text);
        const signal = AbortSignal.any([this.d.signal, stop.signal]);
        try {
          if (item.kind === 'say') await this.d.say(item.text, item.lang, { provider: this.ttsProvider, voice: this.voice }, signal);
          else for (let i = 0; i < item.loop && !signal.aborted; i++) await this.d.call.play([item.url], signal);
        } catch (e) {
          if (!signal.aborted) {
            this.d.logger.info({ err: (e as Error).message, kind: item.kind }, 'conversation relay: speech failed');
            this.send({ type: 'error', description: item.kind === 'say' ? 'the text could not be spoken' : 'the play source could not be played' });
          }
        } finally {
          this.playing = null;
        }
        if (!this.queue.length) this.turn = null;
      }
    } finally {
      this.working = false;
    }
  }
}
