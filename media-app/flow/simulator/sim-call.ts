/**
 * The simulator's CallPort: a virtual call on the virtual clock. Media takes scripted time, DTMF and
 * hangups arrive when the script says, and every command is written to the timeline.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { EMPTY_UUID } from '../../../core/flow';
import type { AmdResult, CallInfo, CallPort, CallStatus, ConnectRequest, ConnectResult, DigitsRequest, DigitsResult, OriginateRequest, RecordingEnded, RecordingRequest } from '../call-port';
import { collectDigits } from '../digit-collector';
import type { SimScript } from '../../../core/flow/sim-script';
import type { VirtualClock } from './virtual-clock';

export type SimTrace = (event: string, data: Record<string, unknown>) => void;

/** Creates calls without running their flows; the timeline shows what was asked. */
export class SimOriginator {
  readonly chained: string[] = [];
  constructor(protected readonly trace: SimTrace) {}

  async originate(req: OriginateRequest): Promise<{ call_ids: string[] }> {
    const call_ids = req.destinations.map(() => randomUUID());
    if (req.chained) this.chained.push(...call_ids);
    this.trace('media', {
      command: 'originate',
      call_ids,
      destinations: req.destinations,
      chained: req.chained,
      early_execution: req.early_execution,
      flow_id: req.flow_id,
      actions: req.actions.length,
      master_call_id: req.master_call_id,
    });
    return { call_ids };
  }
}

export class SimCall extends EventEmitter implements CallPort {
  readonly info: CallInfo;
  private readonly originator: SimOriginator;
  private recording: { id: string; started: number; stop: AbortController; keyListener?: (d: string) => void } | null = null;
  private readonly endings = new Map<string, RecordingEnded>();

  constructor(
    private readonly clock: VirtualClock,
    private readonly script: SimScript,
    private readonly trace: SimTrace,
  ) {
    super();
    const c = script.call ?? {};
    const direction = c.direction ?? 'incoming';
    this.info = {
      id: c.id ?? randomUUID(),
      direction,
      status: c.status ?? (direction === 'incoming' ? 'ringing' : 'progressing'),
      master_call_id: c.master_call_id ?? EMPTY_UUID,
      source: c.source ?? { type: 'tel', target: '+15551230001' },
      destination: c.destination ?? { type: 'tel', target: '+15551230002' },
    };
    this.originator = new SimOriginator(trace);
  }

  private get media() {
    return this.script.media ?? {};
  }

  private setStatus(s: CallStatus): void {
    this.info.status = s;
    this.emit('status', s);
  }

  /** Media that lasts ms; notes an early stop. */
  private async hold(command: string, ms: number, signal: AbortSignal): Promise<void> {
    const from = this.clock.elapsedMs;
    try {
      await this.clock.sleep(ms, signal);
    } catch (e) {
      this.trace('media_stopped', { command, after_ms: this.clock.elapsedMs - from });
      throw e;
    }
  }

  async answer(signal: AbortSignal): Promise<void> {
    this.trace('media', { command: 'answer' });
    if (this.media.answer_ms) await this.hold('answer', this.media.answer_ms, signal);
    if (this.info.status === 'ringing' || this.info.status === 'dialing') this.setStatus('progressing');
  }

  /** The simulated call has media once answered. */
  prepareMedia(signal: AbortSignal): Promise<void> {
    return this.answer(signal);
  }

  async talk(req: { text: string; language: string }, signal: AbortSignal): Promise<void> {
    const chars = req.text.replace(/<[^>]*>/g, '').length;
    const ms = Math.max(this.media.talk_min_ms ?? 500, Math.ceil(chars * (this.media.talk_ms_per_char ?? 60)));
    this.trace('media', { command: 'talk', text: req.text, language: req.language, duration_ms: ms });
    await this.hold('talk', ms, signal);
  }

  async play(urls: string[], signal: AbortSignal): Promise<void> {
    for (const url of urls) {
      const ms = this.media.durations?.[url] ?? this.media.play_ms ?? 2000;
      this.trace('media', { command: 'play', url, duration_ms: ms });
      await this.hold('play', ms, signal);
    }
  }

  async beep(signal: AbortSignal): Promise<void> {
    const ms = this.media.beep_ms ?? 250;
    this.trace('media', { command: 'beep', duration_ms: ms });
    await this.hold('beep', ms, signal);
  }

  collectDigits(req: DigitsRequest, signal: AbortSignal): Promise<DigitsResult> {
    this.trace('media', { command: 'collect_digits', ...req });
    return collectDigits(this, this.clock, req, signal);
  }

  async sendDigits(req: { digits: string; duration: number; interval: number }, signal: AbortSignal): Promise<void> {
    const n = req.digits.length;
    const ms = req.duration * n + req.interval * (n - 1);
    this.trace('media', { command: 'send_digits', ...req, duration_ms: ms });
    await this.hold('send_digits', ms, signal);
  }

  async recordingStart(req: RecordingRequest): Promise<{ recording_id: string }> {
    if (this.recording) throw new Error('a recording is already active on this call');
    const id = randomUUID();
    const stop = new AbortController();
    this.recording = { id, started: this.clock.elapsedMs, stop };
    this.trace('media', { command: 'recording_start', recording_id: id, ...req });
    const end = (cause: string) => () => this.endRecording(cause);
    if (req.duration > 0) this.clock.sleep(req.duration * 1000, stop.signal).then(end('duration'), () => undefined);
    if (req.end_of_silence > 0) {
      const at = this.silenceEnd(this.clock.elapsedMs, req.end_of_silence * 1000);
      this.clock.sleep(at - this.clock.elapsedMs, stop.signal).then(end('silence'), () => undefined);
    }
    if (req.end_of_key && req.end_of_key !== 'none') {
      const key = req.end_of_key;
      const onKey = (d: string) => {
        if (key === 'any' || key === d) this.endRecording('key', d);
      };
      this.recording.keyListener = onKey;
      this.on('dtmf', onKey);
    }
    return { recording_id: id };
  }

  /** First moment, from `from`, after which the caller has been silent for `silence` ms. */
  private silenceEnd(from: number, silence: number): number {
    let quietSince = from;
    const spans = [...(this.script.speech ?? [])].sort((a, b) => a.at - b.at);
    for (const s of spans) {
      const end = s.at + s.duration;
      if (end <= quietSince) continue;
      if (s.at - quietSince >= silence) break;
      quietSince = Math.max(quietSince, end);
    }
    return quietSince + silence;
  }

  private endRecording(cause: string, key?: string): void {
    const r = this.recording;
    if (!r) return;
    this.recording = null;
    r.stop.abort();
    if (r.keyListener) this.off('dtmf', r.keyListener);
    this.trace('media', { command: 'recording_stop', recording_id: r.id, cause, duration_ms: this.clock.elapsedMs - r.started });
    const digits = cause === 'key' ? key : cause === 'hangup' ? 'hangup' : undefined;
    const ending: RecordingEnded = digits === undefined ? { recording_id: r.id } : { recording_id: r.id, digits };
    this.endings.set(r.id, ending);
    this.emit('recording_ended', ending);
  }

  recordingEnded(recordingId: string): RecordingEnded | undefined {
    return this.endings.get(recordingId);
  }

  async recordingStop(): Promise<void> {
    if (this.recording) this.endRecording('stop');
    else this.trace('media', { command: 'recording_stop', recording_id: '', cause: 'none active' });
  }

  async amd(signal: AbortSignal): Promise<{ result: AmdResult }> {
    let result: AmdResult;
    let after: number;
    if (this.script.amd) {
      result = this.script.amd.result;
      after = this.script.amd.after_ms ?? 2000;
    } else {
      // A long first utterance is a greeting: the classic machine cue.
      const now = this.clock.elapsedMs;
      const first = (this.script.speech ?? []).filter((s) => s.at + s.duration > now && s.at < now + 5000).sort((a, b) => a.at - b.at)[0];
      result = !first ? 'notsure' : first.duration > 2500 ? 'machine' : 'human';
      after = first ? Math.min(Math.max(first.at - now, 0) + Math.min(first.duration, 2600), 5000) : 5000;
    }
    this.trace('media', { command: 'amd' });
    await this.hold('amd', after, signal);
    return { result };
  }

  async echo(req: { duration: number; stream: boolean }, signal: AbortSignal): Promise<void> {
    this.trace('media', { command: req.stream ? 'stream_echo' : 'echo', duration_ms: req.duration });
    await this.hold(req.stream ? 'stream_echo' : 'echo', req.duration, signal);
  }

  async hangup(reason: string): Promise<void> {
    if (this.info.status === 'hangup') return;
    this.trace('media', { command: 'hangup', reason });
    this.end(reason, 'local');
  }

  /** The far end hangs up (script event). */
  remoteHangup(reason: string): void {
    if (this.info.status === 'hangup') return;
    this.trace('remote_hangup', { reason });
    this.end(reason, 'remote');
  }

  private end(reason: string, by: 'local' | 'remote'): void {
    this.endRecording('hangup');
    if (this.originator.chained.length > 0) {
      this.trace('media', { command: 'hangup_chained', call_ids: this.originator.chained.splice(0) });
    }
    this.setStatus('hangup');
    this.emit('hangup', { reason, by });
  }

  /** Presses keys (script event); ignored once the call is down. */
  press(digit: string): void {
    if (this.info.status !== 'hangup') this.emit('dtmf', digit);
  }

  async mute(direction: 'both' | 'in' | 'out'): Promise<void> {
    this.trace('media', { command: 'mute', direction });
  }

  async duck(on: boolean): Promise<void> {
    this.trace('media', { command: 'duck', on });
  }

  async connect(req: ConnectRequest, signal: AbortSignal): Promise<ConnectResult> {
    const c = this.script.connect ?? { answer: true };
    this.trace('media', { command: 'connect', destinations: req.destinations, early_media: req.early_media });
    await this.hold('connect', c.answer_after_ms ?? 2000, signal);
    if (!c.answer) {
      this.trace('media', { command: 'connect_failed', hangup_reason: c.hangup_reason ?? 'noanswer' });
      return { answered: false, hangup_reason: c.hangup_reason ?? 'noanswer', ended_by: 'destination' };
    }
    this.trace('media', { command: 'bridged' });
    await this.hold('bridge', c.duration_ms ?? 10_000, signal);
    this.trace('media', { command: 'bridge_ended', ended_by: c.ended_by ?? 'destination' });
    return { answered: true, hangup_reason: c.hangup_reason ?? 'normal', ended_by: c.ended_by ?? 'destination' };
  }

  originate(req: OriginateRequest): Promise<{ call_ids: string[] }> {
    return this.originator.originate(req);
  }

  async hangupReasonOf(callId: string): Promise<string | undefined> {
    return this.script.hangup_reasons?.[callId];
  }
}
