/**
 * CallSession: the one owner of a call this node runs. It owns, as a tree:
 *
 *   CallSession
 *   ├── state        CallState: the Call row's status, one transition function (state.ts)
 *   ├── sip          SipLeg: an incoming offer to answer (offer.ts), our INVITE to CANCEL, or the dialog
 *   ├── endpoint     the media-engine endpoint (its port on a worker)
 *   ├── mediaState   mute, silence, hold, music on hold: the one writer of the endpoint's mutes (media-state.ts)
 *   ├── relay        the rtpengine relay leg in front of it, for an SRTP / WebRTC far end (media-app/rtpengine)
 *   ├── recordings   the active recording (recordings.ts)
 *   ├── digits       DTMF: INFO received, digits of the bridged leg sent on in this party's form (dtmf.ts)
 *   ├── children     chained legs (connect, the call action with chained, queue and transfer legs)
 *   └── timers       each owned by the phase that armed it (phase-timers.ts): the dial timeout by setup,
 *                    the maximum duration by up; a phase's end clears its timers
 *
 * `close(reason)` is the one way a call ends, whoever asks (our hangup, the far end's BYE or CANCEL,
 * a failed dial, a dead endpoint, media worker or relay leg, the master of a chained leg): it cascades
 * down (timers, SIP: BYE/CANCEL/final response, children, recording finished, endpoint and relay leg
 * freed), writes the hangup once with the call's billing step in its transaction (core/billing/call-end.ts), and
 * notifies up once ('hangup' event, `done`, the registry).
 */
import { EventEmitter } from 'node:events';
import { inSpan } from '../../core/tracing';
import type { CallStatus, HangupCause } from '../../core/calls/model';
import type { CallRow } from '../../core/repos/calls';
import { chargeEndedCall } from '../../core/billing/call-end';
import type { DtmfEvent, RxTimeoutEvent } from '../../media-engine';
import type { CallEndpoint } from '../media-server/endpoint';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import { publishCall, type CallEventType } from './events';
import type { CallDeps } from './deps';
import { inDialogHandlers } from './in-dialog';
import { answerInfo, DigitRelay, sendDigits } from './dtmf';
import { DEFAULT_DTMF_MODE, type DtmfMode } from '../../core/calls/dtmf-mode';
import { answerReinvite } from './sdp-exchange';
import { mediaPath, type MediaPath } from './media-path';
import type { RelayLeg } from '../rtpengine';
import { Recordings } from './recordings';
import { CallState, type CallMove } from './state';
import { CallMediaState } from './media-state';
import { CallQualityMeter } from './quality';
import { CallRtpCapture } from './rtp-capture';
import { bridgeOf, isHandedOff, partyLeaving, type Bridge } from './bridge';
import { SessionTimer } from './session-timer';
import type { IncomingOffer } from './offer';
import { InternalDialog } from '../outbound/internal';
import { mediaTimedOut, sessionExpired, watchParty } from './dead-party';
import { chainedReason, MEDIA_RELAY_GONE, peerDiedReason, sendBye } from './close-reason';
import type { CallDialog, CallSessionEvents, CloseReason, HangupEvent, Life, PendingUac, SipLeg } from './session-types';
import { PhaseTimers, type PhaseTimer } from './phase-timers';

export type { CallSessionEvents, CloseReason, HangupEvent, PendingUac } from './session-types';
export { MEDIA_RELAY_GONE } from './close-reason';

export class CallSession extends EventEmitter<CallSessionEvents> {
  readonly state: CallState;
  readonly recordings: Recordings;
  /** What mute, silence and hold want of the party's audio; the only code that mutes the endpoint. */
  readonly mediaState: CallMediaState;
  /** The leg's call quality: samples every 5 s while there is an endpoint, the summary at the end (quality.ts). */
  private readonly quality: CallQualityMeter;
  /** The leg's RTP capture for its pcap, when the node has RTP_CAPTURE on (rtp-capture.ts). */
  private readonly rtpCapture: CallRtpCapture;
  private ep: CallEndpoint | null = null;
  private rl: RelayLeg | null = null;
  private sip: SipLeg = { kind: 'none' };
  private life: Life = { phase: 'live' };
  /** The call's timers, each the phase's that armed it: setup (not answered yet), then up (answered). */
  private readonly timers = new PhaseTimers<'setup' | 'up'>('setup');
  /** RFC 4028 on the dialog (session-timer.ts), from attachDialog to close */
  private sessionTimer: SessionTimer | null = null;
  private readonly children = new Set<CallSession>();
  readonly done: Promise<HangupEvent>;
  private resolveDone!: (e: HangupEvent) => void;
  private answering: Promise<void> | null = null;
  /** the answer far enough for media: the 200 OK sent (a late offer: the ACK's answer applied) */
  private answerUp: Promise<void> | null = null;
  private readonly upWaiters: { resolve(): void; reject(e: Error): void }[] = [];
  /** How digits are sent to this leg's party (its trunk's or extension's dtmf_mode). */
  dtmfMode: DtmfMode = DEFAULT_DTMF_MODE;
  private readonly digits = new DigitRelay(this);

  constructor(
    row: CallRow,
    readonly deps: CallDeps,
  ) {
    super();
    this.state = new CallState(row, deps);
    this.state.on('stateChange', (to) => this.emit('status', to));
    this.recordings = new Recordings(deps, this);
    this.mediaState = new CallMediaState(() => (this.isEnded ? null : this.ep), row.mute_direction);
    const q = deps.app.quality;
    this.quality = new CallQualityMeter({ db: deps.db, events: deps.events, logger: deps.logger, sampleMs: q.sampleMs, thresholds: q.thresholds }, () => this.row);
    this.rtpCapture = new CallRtpCapture({ redis: deps.redis, prefix: deps.config.redisKeyPrefix, logger: deps.logger, settings: deps.app.rtpCapture }, () => this.id);
    this.done = new Promise((r) => (this.resolveDone = r));
    // listeners are optional: an 'error' event without one must not throw
    this.on('error', () => undefined);
  }

  get row(): CallRow {
    return this.state.row;
  }

  get id(): string {
    return this.row.id;
  }

  get status(): CallStatus {
    return this.state.state;
  }

  /** Closing or closed: no new media operation starts. */
  get isEnded(): boolean {
    return this.life.phase !== 'live';
  }

  /** The dialog of the answered call (null before the answer). */
  get dialog(): CallDialog | null {
    return this.sip.kind === 'up' ? this.sip.dialog : null;
  }

  get answered(): boolean {
    return this.sip.kind === 'up';
  }

  /** A SIP side through sip-server: an INVITE, ours, or a SIP dialog (none yet, or an internal call's far end: not; internal-dial.ts). */
  get viaSipServer(): boolean {
    const s = this.sip;
    return s.kind === 'offered' ? !s.offer.internal : s.kind === 'inviting' ? !s.invite.internal : s.kind === 'up' && !(s.dialog instanceof InternalDialog);
  }

  get endpoint(): CallEndpoint | null {
    return this.ep;
  }

  /** The bridge this call is a side of (bridge.ts), or null; only a Bridge changes it. */
  get bridge(): Bridge | null {
    return bridgeOf(this);
  }

  /** A bridge put another call in this one's place (a transfer): its chained legs are no longer its own. */
  get handedOff(): boolean {
    return isHandedOff(this);
  }

  /** The session owns its endpoint: its DTMF become the call's, its death ends the call. */
  set endpoint(ep: CallEndpoint | null) {
    if (this.ep === ep) return;
    this.ep?.off('dtmf', this.onDtmf).off('peerDtmf', this.onPeerDtmf).off('destroy', this.onEndpointGone).off('rxTimeout', this.onRxTimeout);
    this.ep = ep;
    this.quality.attach(ep && !ep.destroyed ? ep : null);
    this.rtpCapture.attach(ep && !ep.destroyed ? ep : null);
    if (!ep) return;
    if (ep.destroyed) {
      this.onEndpointGone({ reason: 'destroyed' });
      return;
    }
    ep.on('dtmf', this.onDtmf);
    ep.on('peerDtmf', this.onPeerDtmf);
    ep.once('destroy', this.onEndpointGone);
    ep.on('rxTimeout', this.onRxTimeout);
    this.watchMedia();
    // a new endpoint starts unmuted: it takes the mutes already wanted
    const m = this.mediaState.flags;
    if (m.mute || m.silenced || m.held) this.mediaState.sync().catch((err: Error) => this.deps.logger.warn({ err: err.message, call: this.id }, 'endpoint mutes not applied'));
  }

  /** The rtpengine relay leg in front of the endpoint (SRTP / WebRTC far end), or null (plain RTP). */
  get relay(): RelayLeg | null {
    return this.rl;
  }

  /** The session owns its relay leg: its death ends the call, the call's end deletes it. */
  set relay(leg: RelayLeg | null) {
    if (this.rl === leg) return;
    this.rl?.off('close', this.onRelayGone);
    this.rl = leg;
    if (!leg) return;
    if (leg.closed) {
      this.onRelayGone('relay leg already closed', false);
      return;
    }
    leg.once('close', this.onRelayGone);
  }

  /** The media side of offer/answer: the endpoint, behind the relay leg when there is one. */
  get media(): MediaPath | null {
    return this.ep ? mediaPath(this.ep, this.rl) : null;
  }

  private readonly onRelayGone = (reason: string, byUs: boolean) => {
    if (byUs || this.isEnded) return;
    this.deps.logger.warn({ call: this.id, reason }, 'media relay leg gone: ending the call');
    this.closeInBackground({ cause: 'failure', by: 'local', why: `${MEDIA_RELAY_GONE}: ${reason}`, announce: true });
  };

  private readonly onDtmf = (e: DtmfEvent) => this.emit('dtmf', e.dtmf);
  private readonly onPeerDtmf = (e: DtmfEvent) => this.digits.relay(e);

  /** A digit of this call that no endpoint carries (an INFO before media). */
  emitDigit(digit: string): void {
    this.emit('dtmf', digit);
  }

  /** Sends digits to the party in its form: RFC 4733, tones, or INFO (dtmf.ts). */
  sendDigits(digits: string, durationMs: number): Promise<void> {
    return sendDigits(this, digits, durationMs);
  }

  /** The endpoint died under us (e.g. its worker exited, reason 'worker-died'): the call cannot carry media any more. */
  private readonly onEndpointGone = (end?: { reason?: string; message?: string }) => {
    if (this.isEnded) return;
    this.deps.logger.warn({ call: this.id, reason: end?.reason, err: end?.message }, 'media endpoint gone: ending the call');
    this.closeInBackground({ cause: 'failure', by: 'local', why: `media_gone${end?.reason ? `: ${end.reason}` : ''}`, announce: true });
  };

  /** The party's media watch (MEDIA_INACTIVITY_TIMEOUT_MS, dead-party.ts): on a SIP call's endpoint once it is up. */
  private watchMedia(): void {
    if (this.sip.kind === 'up' && this.sip.dialog instanceof EventEmitter && this.ep) watchParty(this.ep, this.deps.app.mediaInactivityMs, { logger: this.deps.logger, call: this.id });
  }

  /** The party sent no RTP or RTCP for the timeout (not held, not only listening): it is gone. */
  private readonly onRxTimeout = (e: RxTimeoutEvent) => {
    if (!this.isEnded && this.sip.kind === 'up') this.closeInBackground(mediaTimedOut(e));
  };

  publish(type: CallEventType): Promise<void> {
    return publishCall(this.deps.events, type, this.row, this.deps.logger);
  }

  /**
   * A write outside the status (mute, recording) changed these fields of the row: the session takes
   * them and publishes call_updated, so clients follow without reading the call again. After the
   * call ended nothing is published (call_hangup stays the call's last event).
   */
  async updated(fields: Partial<Omit<CallRow, 'status'>>): Promise<void> {
    this.state.patch(fields);
    if (this.isEnded) return;
    this.emit('updated', fields);
    await this.publish('call_updated');
  }

  /**
   * Moves the status (never to hangup: that is close()). False when refused or nothing changed.
   * Never rejects: a status the row cannot take (the write failed for good) ends the call.
   */
  async setStatus(to: Exclude<CallMove, 'hangup'>): Promise<boolean> {
    if (this.life.phase === 'closed') return false;
    try {
      return await this.state.move(to);
    } catch (err) {
      this.deps.logger.error({ err: (err as Error).message, call: this.id, to }, 'call status write failed: ending the call');
      this.closeInBackground({ cause: 'failure', by: 'local', why: `status write failed (${to})`, announce: true });
      return false;
    }
  }

  /**
   * Work the session owns (dialling, starting its flow): its failure ends the call with a reason,
   * never goes unobserved.
   */
  own(work: Promise<unknown>, what: string): void {
    work.catch((err: Error) => {
      this.deps.logger.warn({ err: err?.message, call: this.id }, `${what} failed: ending the call`);
      this.closeInBackground({ cause: 'failure', by: 'local', why: `${what} failed: ${err?.message ?? err}`, announce: true });
    });
  }

  /** A chained leg: it closes with this session (unless a bridge handed this one's place to another call) and leaves the tree when it closes. */
  adopt(child: CallSession): void {
    if (this.isEnded) return void child.closeInBackground({ cause: 'normal_clearing', by: 'local', why: 'master_gone', announce: true });
    this.children.add(child);
    void child.done.then(() => this.children.delete(child));
  }

  /** An incoming call's offer to answer or refuse (offer.ts): an INVITE, or the far side of an internal call. */
  setOffer(offer: IncomingOffer): void {
    this.moveSip({ kind: 'offered', offer });
    offer.onCancel(() => this.closeInBackground({ cause: 'normal_clearing', by: 'remote', why: 'remote_cancel' }));
  }

  setPendingUac(handle: PendingUac | null): void {
    if (handle && this.isEnded) {
      // our INVITE left after the call was closed: it is cancelled at once
      try {
        handle.cancel();
      } catch {
        /* already final */
      }
      return;
    }
    if (this.sip.kind === 'none' || this.sip.kind === 'inviting') this.moveSip(handle ? { kind: 'inviting', invite: handle } : { kind: 'none' });
  }

  /** Answers a pending inbound INVITE with our endpoint's SDP; outgoing: waits until the far end answers. Idempotent. */
  answer(): Promise<void> {
    return this.answerSteps().answered;
  }

  /**
   * answer(), resolved as soon as media may flow: the 200 OK has left (a late offer: its ACK brought
   * the answer), before the status write (progressing) that answer() also waits for. A prompt
   * starts its audio then; a failed status write still ends the call (setStatus).
   */
  answerForMedia(): Promise<void> {
    return this.answerSteps().up;
  }

  private answerSteps(): { up: Promise<void>; answered: Promise<void> } {
    if (this.sip.kind === 'up') {
      const answered = this.answering ?? Promise.resolve();
      return { up: this.answerUp ?? answered, answered };
    }
    if (this.isEnded) {
      const ended = Promise.reject(new Error('call ended'));
      return { up: ended, answered: ended };
    }
    if (this.sip.kind !== 'offered') {
      // outgoing (early execution): media waits until the far end answers, or fails when it never does
      const up = new Promise<void>((resolve, reject) => this.upWaiters.push({ resolve, reject }));
      return { up, answered: up };
    }
    if (!this.answering) this.startAnswer(this.sip.offer);
    return { up: this.answerUp!, answered: this.answering! };
  }

  private startAnswer(offer: IncomingOffer): void {
    let upNow!: () => void;
    let upFailed!: (e: Error) => void;
    this.answerUp = new Promise<void>((resolve, reject) => ((upNow = resolve), (upFailed = reject)));
    this.answerUp.catch(() => undefined); // told to its callers; answer()'s get the same failure
    this.answering = inSpan('call answer', {}, async () => {
      if (!this.endpoint) throw new Error('no media endpoint');
      // a late offer's answer comes with the ACK (offer.ts)
      const { dialog, ack } = await offer.accept({ endpoint: this.endpoint, relay: this.rl });
      // a close that landed while the 200 OK was in flight: the late dialog got its BYE
      if (!this.attachDialog(dialog)) {
        void ack?.catch(() => undefined);
        throw new Error('call ended before the answer completed');
      }
      await ack;
      upNow();
      await this.setStatus('progressing');
    });
    // whoever asked only for media (answerForMedia) still hears of a failure before the 200 OK;
    // the status write itself never rejects (setStatus ends the call instead)
    this.answering.catch(upFailed);
  }

  /**
   * The SIP leg's move to up (offered or inviting → up), guarded like the status: the call is up on this
   * dialog (watch for the far end's BYE, arm the maximum duration). Refused once the session is closing
   * (a close landed while the 200 OK was in flight): the late dialog is ended with a BYE, and false.
   */
  attachDialog(dialog: CallDialog): boolean {
    if (this.isEnded) {
      this.deps.logger.info({ call: this.id }, 'dialog made after the call closed: ended with a BYE');
      dialog.destroy().catch((err: Error) => this.deps.logger.warn({ err: err.message, call: this.id }, 'BYE of a late dialog failed'));
      return false;
    }
    const offer = this.sip.kind === 'offered' ? this.sip.offer.req : null;
    this.moveSip({ kind: 'up', dialog });
    for (const w of this.upWaiters.splice(0)) w.resolve();
    dialog.on('destroy', () => this.closeInBackground({ cause: 'normal_clearing', by: 'remote', why: 'remote_bye' }));
    // re-INVITE (hold, codec change, no SDP: we offer): the endpoint answers it
    dialog.on('modify', (req: SrfRequest, res: SrfResponse) => answerReinvite(dialog, this.media, req, res, this.deps.logger, this.sessionTimer?.answerRefresh(req)));
    // in-dialog requests (INFO: DTMF; REFER...): a drachtio dialog emits them; an internal one never does
    if (dialog instanceof EventEmitter) {
      dialog.on('info', (req: SrfRequest, res: SrfResponse) => answerInfo(this, req, res));
      for (const [event, fn] of inDialogHandlers<CallSession>(this.deps)) dialog.on(event, (req: SrfRequest, res: SrfResponse) => fn(this, req, res));
    }
    this.after(this.deps.app.maxDurationMs, () => this.closeInBackground({ cause: 'duration_timeout', by: 'local', why: 'duration_timeout' }));
    this.sessionTimer = SessionTimer.start(dialog, offer, this.deps.app.sessionTimer, (why) => this.closeInBackground(sessionExpired(why)), this.deps.logger.child({ call: this.id }));
    this.watchMedia();
    return true;
  }

  /**
   * Runs fn after ms unless the call's current phase ends first: a timer armed before the answer (the
   * dial timeout) is cleared when the call is answered, one armed once up when the call ends.
   */
  after(ms: number, fn: () => void): PhaseTimer {
    return this.timers.after(ms, () => {
      if (!this.isEnded) fn();
    });
  }

  /** The one writer of the SIP leg: its phase (setup until up) owns the call's timers. */
  private moveSip(next: SipLeg): void {
    this.sip = next;
    if (next.kind === 'up') this.timers.enter('up');
  }

  /** Ends the call from our side, through terminating (up, or inbound not answered) or canceling (outbound); `reasonHeader`: our BYE's Reason (by default its dead peer's: close-reason.ts). Idempotent. */
  async hangup(why = 'normal', reasonHeader = peerDiedReason(this)): Promise<void> {
    await this.close({ cause: 'normal_clearing', by: 'local', why, announce: true, ...(reasonHeader ? { reasonHeader } : {}) });
  }

  /** An inbound INVITE not yet answered nor refused. */
  get isOffered(): boolean {
    return this.sip.kind === 'offered';
  }

  /** Refuses a pending offer with this status (the call ends as a remote-side failure: 486 busy, 480 / 603 no answer). */
  async rejectWith(status: number): Promise<void> {
    if (this.sip.kind !== 'offered') return this.hangup();
    const cause: HangupCause = status === 486 ? 'user_busy' : status === 480 ? 'no_answer' : status === 603 ? 'call_rejected' : 'failure';
    await this.close({ cause, by: 'remote', why: `rejected_${status}`, sipStatus: status });
  }

  /** Tears down without passing through terminating (maximum duration, dial timeout keep their own reason). */
  async terminate(cause: HangupCause): Promise<void> {
    await this.close({ cause, by: 'local', why: cause });
  }

  /** The far end or the dialler ended it (BYE received, the dial failed): frees and writes the hangup. */
  async finish(cause: HangupCause): Promise<void> {
    await this.close({ cause, by: 'remote', why: cause });
  }

  /** close() for a caller that cannot wait (an event handler): a failure is logged, never lost. */
  closeInBackground(reason: CloseReason): void {
    this.close(reason).catch((err: Error) => this.deps.logger.error({ err: err.message, call: this.id }, 'call close failed'));
  }

  /**
   * The one end of a call. Down: timers, SIP (BYE / CANCEL / final response), children, recording,
   * endpoint. Then the hangup row and its charge (once), the registry, and up: 'hangup' and `done`. Idempotent:
   * a second close waits for the first.
   */
  async close(reason: CloseReason): Promise<HangupEvent> {
    if (this.life.phase !== 'live') return this.done;
    this.life = { phase: 'closing', reason };
    // the bridge first: a consultation completes (its target takes this call's place) before the children close
    partyLeaving(this, reason);
    this.timers.end();
    this.sessionTimer?.stop();
    for (const w of this.upWaiters.splice(0)) w.reject(new Error('call ended before answer'));
    // The SIP side never waits for the status write (it may be retrying through a database outage).
    const announced = reason.announce ? this.state.move(this.sip.kind === 'up' || this.sip.kind === 'offered' ? 'terminating' : 'canceling').catch(() => false) : Promise.resolve(false);
    await this.releaseSip(reason);
    const children = this.handedOff ? [] : [...this.children];
    // the recording is finished (file closed, row ended) before its endpoint goes
    const recording = this.recordings.stop();
    await Promise.allSettled(children.map((c) => c.close({ cause: 'normal_clearing', by: 'local', why: 'master_gone', announce: true, ...chainedReason(reason) })));
    await recording.catch(() => undefined);
    // the last quality sample and the call's quality summary, from the endpoint while it is still up
    // and its RTP capture (when on), both bounded
    await Promise.all([this.quality.finish(), this.rtpCapture.finish()]);
    // media: the port is freed and nothing more is sent even while the write below is retried
    if (this.ep) await this.ep.destroy().catch(() => undefined);
    this.endpoint = null;
    if (this.rl) await this.rl.close(reason.why);
    this.relay = null;
    await announced;
    this.life = { phase: 'closed', reason };
    try {
      // the billing step: charged in the hangup's own transaction, only by the write that ended the row
      await this.state.move('hangup', reason.cause, [chargeEndedCall]);
    } catch (err) {
      this.deps.logger.error({ err: (err as Error).message, call: this.id }, 'hangup write failed');
    }
    await this.deps.calls.remove(this.id).catch(() => undefined);
    const ev: HangupEvent = { reason: reason.why, by: this.row.hangup_by === 'local' ? 'local' : this.row.hangup_by === 'remote' ? 'remote' : reason.by };
    try {
      this.emit('hangup', ev);
    } catch (err) {
      this.deps.logger.error({ err: (err as Error).message, call: this.id }, 'a hangup listener threw');
    }
    this.resolveDone(ev);
    return ev;
  }

  /** The SIP side of a close: BYE an up dialog, answer a pending INVITE, CANCEL ours. */
  private async releaseSip(reason: CloseReason): Promise<void> {
    const sip = this.sip;
    if (reason.sipGone) return; // over a dead connection drachtio-srf's BYE would wait for ever
    switch (sip.kind) {
      case 'up':
        if (reason.by === 'local' || sip.dialog.connected) await sendBye(sip.dialog, reason);
        return;
      case 'offered':
        this.moveSip({ kind: 'none' });
        sip.offer.refuse(reason.sipStatus ?? 480);
        return;
      case 'inviting':
        try {
          sip.invite.cancel();
        } catch {
          /* already final */
        }
        return;
      case 'none':
        return;
    }
  }
}
