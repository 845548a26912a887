/**
 * One call this node owns: its Call row, its SIP dialog (drachtio-srf) and its media endpoint.
 * Every status change goes through the guarded repository transition, and is published once, after
 * the write, only when the row really changed (so a duplicate command publishes nothing).
 *
 * Statuses (voipbin-notes §2): dialing → ringing → progressing → terminating/canceling → hangup.
 */
import { EventEmitter } from 'node:events';
import { callsRepo, type CallRow } from '../../core/repos/calls';
import type { CallStatus, HangupCause } from '../../core/calls/model';
import { retryWrite } from '../../core/db/retry';
import type { DtmfEvent, Endpoint } from '../../media-engine';
import type { SrfDialog, SrfRequest, SrfResponse } from '../srf';
import type { CallDeps } from './deps';
import { publishCall, type CallEventType } from '../events';

/** A handler for in-dialog requests other than re-INVITE and BYE (REFER: media-app/transfer). */
export type InDialogHandler = (call: LiveCall, req: SrfRequest, res: SrfResponse) => void;
const inDialogHandlers = new WeakMap<object, Map<string, InDialogHandler>>();

/** Registers, for one node (its CallDeps), who answers an in-dialog request ('refer', 'info'...). */
export function onInDialogRequest(deps: CallDeps, event: 'refer' | 'info' | 'message' | 'notify', fn: InDialogHandler): void {
  let m = inDialogHandlers.get(deps);
  if (!m) inDialogHandlers.set(deps, (m = new Map()));
  m.set(event, fn);
}

export interface HangupEvent {
  reason: string;
  by: 'local' | 'remote';
}

export class LiveCall extends EventEmitter {
  row: CallRow;
  private ep: Endpoint | null = null;
  dialog: SrfDialog | null = null;
  /** An inbound INVITE not answered yet. */
  private pendingUas: { req: SrfRequest; res: SrfResponse } | null = null;
  /** The INVITE we sent, until it is answered (CANCEL goes through it). */
  private pendingUac: { cancel(): void } | null = null;
  private ending = false;
  private ended = false;
  private readonly timers: NodeJS.Timeout[] = [];
  readonly done: Promise<HangupEvent>;
  private resolveDone!: (e: HangupEvent) => void;
  private answering: Promise<void> | null = null;
  private readonly upWaiters: (() => void)[] = [];
  /** The flow port of this call, when one was made (commands reach recordings and mute through it). */
  port: unknown = null;
  /** Set when a transfer put another call in this one's place in its bridge (media-app/transfer). */
  replacedBy: LiveCall | null = null;

  constructor(row: CallRow, private readonly deps: CallDeps) {
    super();
    this.row = row;
    this.done = new Promise((r) => (this.resolveDone = r));
    // listeners are optional: an 'error' event without one must not throw
    this.on('error', () => undefined);
  }

  get endpoint(): Endpoint | null {
    return this.ep;
  }

  /** Setting the endpoint relays its DTMF as this call's 'dtmf' events. */
  set endpoint(ep: Endpoint | null) {
    this.ep = ep;
    ep?.on('dtmf', (e: DtmfEvent) => this.emit('dtmf', e.dtmf));
  }

  get id(): string {
    return this.row.id;
  }

  get status(): CallStatus {
    return this.row.status;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  get answered(): boolean {
    return this.dialog !== null;
  }

  private get repo() {
    return callsRepo(this.deps.db);
  }

  async publish(type: CallEventType): Promise<void> {
    await publishCall(this.deps.events, type, this.row, this.deps.logger);
  }

  /** Moves to `to` when allowed; publishes call_<to> once. False when nothing changed. */
  async setStatus(to: Exclude<CallStatus, 'hangup'>): Promise<boolean> {
    if (this.ended) return false;
    // retried through a short database outage (core/db/retry.ts): the transition is guarded, so repeating it is safe
    const t = await retryWrite(this.deps.logger, `call ${this.id} ${to}`, () => this.repo.transition(this.id, to));
    if (!t.changed || !t.call) return false;
    this.row = t.call;
    await this.publish(`call_${to}`);
    this.emit('status', to);
    return true;
  }

  setPendingUas(req: SrfRequest, res: SrfResponse): void {
    this.pendingUas = { req, res };
    req.on('cancel', () => void this.finish('normal_clearing'));
  }

  setPendingUac(handle: { cancel(): void } | null): void {
    this.pendingUac = handle;
  }

  /** Answers a pending inbound INVITE with our endpoint's SDP (idempotent). */
  answer(): Promise<void> {
    if (this.dialog) return this.answering ?? Promise.resolve();
    if (!this.pendingUas) {
      // outgoing (early execution): media waits until the far end answers, or fails when it never does
      if (this.ended) return Promise.reject(new Error('call ended'));
      return new Promise<void>((resolve, reject) => {
        this.upWaiters.push(resolve);
        void this.done.then(() => reject(new Error('call ended before answer')));
      });
    }
    const { req, res } = this.pendingUas;
    this.answering ??= (async () => {
      if (!this.endpoint) throw new Error('no media endpoint');
      const dialog = await this.deps.srf.createUAS(req, res, { localSdp: this.endpoint.local.sdp });
      this.pendingUas = null;
      this.attachDialog(dialog);
      await this.setStatus('progressing');
    })();
    return this.answering;
  }

  /** The call is up on this dialog: watch for the far end's BYE, arm the maximum duration. */
  attachDialog(dialog: SrfDialog): void {
    this.dialog = dialog;
    this.pendingUac = null;
    for (const w of this.upWaiters.splice(0)) w();
    dialog.on('destroy', () => void this.finish('normal_clearing'));
    dialog.on('modify', (req: SrfRequest, res: SrfResponse) => {
      // re-INVITE (hold, codec change): the endpoint answers it
      if (!this.endpoint) return res.send(488);
      this.endpoint.modify(req.body).then(
        (sdp) => res.send(200, { body: sdp }),
        () => res.send(488),
      );
    });
    for (const [event, fn] of inDialogHandlers.get(this.deps) ?? []) dialog.on(event, (req: SrfRequest, res: SrfResponse) => fn(this, req, res));
    this.after(this.deps.app.maxDurationMs, () => void this.terminate('duration_timeout'));
  }

  /** A transfer hands this call's place in a bridge to `other` (connect follows it; see factory.connect). */
  replaceWith(other: LiveCall): void {
    this.replacedBy = other;
    this.emit('replaced', other);
  }

  /** Runs fn after ms unless the call ended first. */
  after(ms: number, fn: () => void): void {
    const t = setTimeout(() => !this.ended && fn(), ms);
    t.unref();
    this.timers.push(t);
  }

  /**
   * Ends the call from our side. Up: terminating, BYE. Inbound not answered: terminating, a final
   * response. Outbound not answered: canceling, CANCEL. Idempotent.
   */
  async hangup(_reason = 'normal'): Promise<void> {
    if (this.ended || this.ending) return this.done.then(() => undefined);
    this.ending = true;
    // The SIP side never waits for the status write (it may be retrying through a database
    // outage); the hangup row is written after it, so hangup_by still derives from it.
    if (this.dialog) {
      const written = this.setStatus('terminating').catch(() => false);
      await this.dialog.destroy().catch(() => undefined);
      await written;
      await this.finish('normal_clearing');
    } else if (this.pendingUas) {
      const written = this.setStatus('terminating').catch(() => false);
      const { res } = this.pendingUas;
      this.pendingUas = null;
      if (!res.finalResponseSent) res.send(480);
      await written;
      await this.finish('normal_clearing');
    } else {
      const written = this.setStatus('canceling').catch(() => false);
      try {
        this.pendingUac?.cancel();
      } catch {
        /* already final */
      }
      await written;
      await this.finish('normal_clearing');
    }
  }

  /** Refuses a pending inbound INVITE with this status (the call ends as a remote-side failure). */
  async rejectWith(status: number): Promise<void> {
    if (this.ended || !this.pendingUas) return this.hangup();
    this.ending = true;
    const { res } = this.pendingUas;
    this.pendingUas = null;
    if (!res.finalResponseSent) res.send(status);
    await this.finish(status === 486 ? 'user_busy' : status === 480 ? 'no_answer' : 'failure');
  }

  /** Tears down without passing through terminating (maximum duration, AMD keep their own reason). */
  async terminate(cause: HangupCause): Promise<void> {
    if (this.ended || this.ending) return;
    this.ending = true;
    if (this.dialog) await this.dialog.destroy().catch(() => undefined);
    else if (this.pendingUas && !this.pendingUas.res.finalResponseSent) this.pendingUas.res.send(480);
    else this.pendingUac?.cancel();
    await this.finish(cause);
  }

  /** Writes the hangup once (reason and side from the last status), frees the media, says so. */
  async finish(cause: HangupCause): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    for (const t of this.timers) clearTimeout(t);
    // media first: the port is freed and nothing more is sent even while the write below is retried
    if (this.endpoint) await this.endpoint.destroy().catch(() => undefined);
    try {
      const t = await retryWrite(this.deps.logger, `call ${this.id} hangup`, () => this.repo.hangup(this.id, cause));
      if (t.call) this.row = t.call;
      if (t.changed) await this.publish('call_hangup');
    } catch (err) {
      this.deps.logger.error({ err: (err as Error).message, call: this.id }, 'hangup write failed');
    }
    await this.deps.calls.remove(this.id);
    const ev: HangupEvent = { reason: this.row.hangup_reason || 'normal', by: this.row.hangup_by === 'local' ? 'local' : 'remote' };
    this.emit('hangup', ev);
    this.resolveDone(ev);
  }
}
