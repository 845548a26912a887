/**
 * Runs transfers on the node that owns the transferer's call.
 *
 * blind:    the transferee (the transferer's bridged peer) stays where it is while the targets ring
 *           (a groupcall, ring_all); on answer it is bridged to the target and the transferer is
 *           released. No answer: nothing changes for the two original parties.
 * attended: the peer is put on hold (unbridged), the transferer is bridged to the answering target to
 *           consult; when the transferer hangs up, the peer is bridged to the target. If the target
 *           hangs up or never answers, the transferer gets its peer back.
 * Replaces: a phone's attended REFER (RFC 3891) joins the peers of its two dialogs and releases both.
 *
 * The bridge bookkeeping of factory.connect follows a replaced call (CallSession.replaceWith), so the
 * flows and inbound bridges around a transfer keep working on the new pair.
 */
import type { Address } from '../../core/repos/calls';
import { transfersRepo, type TransferRow } from '../../core/repos/transfers';
import { TRANSFER_FAIL_SIP, type TransferFailReason } from '../../core/transfers/model';
import type { CallFactory } from '../call/factory';
import type { CallSession } from '../call/session';
import type { GroupcallRunner, RunningGroupcall } from '../groupcall/runner';
import { createGroupcall } from '../groupcall/create';
import { settleTransfer, targetByeReason, targetFailure } from './outcome';
import { callsRepo } from '../../core/repos/calls';

/**
 * What a REFER's subscription hears (RFC 3515 NOTIFYs, media-app/transfer/refer-notify.ts). A report
 * never holds the transfer up; `flushed` waits, at most maxMs, for the reports so far to be answered.
 */
export interface Progress {
  report(sipStatus: number, phrase: string): void;
  flushed(maxMs: number): Promise<void>;
}

const noProgress: Progress = { report: () => undefined, flushed: () => Promise.resolve() };

/** How long a blind transfer's final NOTIFY may hold up the BYE to the transferer (a phone that never answers NOTIFY). */
export const NOTIFY_GRACE_MS = 2000;

type Fail = (reason: TransferFailReason) => Promise<TransferRow | null>;

export class TransferError extends Error {}

export class TransferEngine {
  /** Pairs this engine bridged (a transferred pair has no connect around it unless one followed). */
  private readonly peers = new Map<string, CallSession>();

  constructor(readonly factory: CallFactory, private readonly runner: GroupcallRunner) {}

  private get deps() {
    return this.factory.deps;
  }

  /** The live, answered call bridged to `call`, if any. */
  async peerOf(call: CallSession): Promise<CallSession | null> {
    const usable = (c: CallSession | undefined | null): c is CallSession => !!c && !c.isEnded && c.answered && c !== call;
    const follow = (c: CallSession | undefined): CallSession | undefined => {
      let x = c;
      for (let i = 0; x?.replacedBy && i < 10; i++) x = x.replacedBy;
      return x;
    };
    const mine = follow(this.peers.get(call.id));
    if (usable(mine)) return mine;
    const master = follow(this.factory.get(call.row.master_call_id));
    if (usable(master)) return master;
    for (const id of await callsRepo(this.deps.db).liveLegIds(call.id)) {
      const c = follow(this.factory.get(id));
      if (usable(c)) return c;
    }
    return null;
  }

  /** Bridges a and b as a pair this engine watches: when one ends, the other is hung up. */
  private async pair(a: CallSession, b: CallSession, followedByConnect: boolean): Promise<void> {
    await a.endpoint!.bridge(b.endpoint!);
    this.peers.set(a.id, b);
    this.peers.set(b.id, a);
    // a connect around the pair hangs up the survivor itself; otherwise the pair goes together
    const end = (gone: CallSession, other: CallSession) => () => {
      const paired = this.peers.get(other.id) === gone;
      if (this.peers.get(gone.id) === other) this.peers.delete(gone.id);
      if (paired) this.peers.delete(other.id);
      if (!followedByConnect && paired && !gone.replacedBy) void other.hangup('normal');
    };
    void a.done.then(end(a, b));
    void b.done.then(end(b, a));
  }

  /** The address the target sees as the caller: the transferee's own party. */
  private callerOf(peer: CallSession): Address {
    return peer.row.direction === 'incoming' ? peer.row.source : peer.row.destination;
  }

  private async ring(t: TransferRow, source: Address): Promise<RunningGroupcall> {
    const { groupcall } = await createGroupcall(this.deps, {
      customerId: t.customer_id,
      source,
      destinations: t.transferee_addresses,
      ringMethod: 'ring_all',
      answerMethod: 'hangup_others',
    });
    await transfersRepo(this.deps.db).update(t.id, { groupcall_id: groupcall.id });
    return this.runner.ring(groupcall);
  }

  /**
   * The target that answered, or why there is none: `left` when one of `watched` ended while the
   * targets rang (they are cancelled then; one answering meanwhile gets a BYE with a Reason).
   */
  private async answerWhile(gc: RunningGroupcall, watched: CallSession[], whyLeft: () => TransferFailReason): Promise<{ target: CallSession | null; left?: TransferFailReason }> {
    const left = Promise.race(watched.map((c) => c.done)).then(() => 'left' as const);
    const first = await Promise.race([gc.answered, left]);
    if (first !== 'left') return { target: first };
    const why = whyLeft();
    await gc.hangup(targetByeReason(why));
    return { target: null, left: why };
  }

  /** Hangs up a target the transfer can no longer use, telling it why (RFC 3326 Reason on the BYE). */
  private async dropTarget(target: CallSession, why: TransferFailReason): Promise<void> {
    await target.close({ cause: 'normal_clearing', by: 'local', why: `transfer_${why}`, announce: true, reasonHeader: targetByeReason(why) });
  }

  /** Executes a transfer row; resolves when it is done or has failed (progress for REFER's NOTIFYs). */
  async execute(t: TransferRow, progress: Progress = noProgress): Promise<TransferRow | null> {
    const transferer = this.factory.get(t.transferer_call_id);
    let peer: CallSession | null = null;
    const fail: Fail = async (reason) => {
      const [status, phrase] = TRANSFER_FAIL_SIP[reason];
      progress.report(status, phrase);
      return settleTransfer(this.factory, t, { status: 'failed', reason }, [transferer, peer]);
    };
    try {
      if (!transferer || transferer.isEnded || transferer.status !== 'progressing') return await fail('transferer_gone');
      peer = await this.peerOf(transferer);
      if (!peer) return await fail('not_bridged');
      return t.type === 'blind' ? await this.blind(t, transferer, peer, progress, fail) : await this.attended(t, transferer, peer, progress, fail);
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message, transfer: t.id }, 'transfer broke');
      return fail('internal_error');
    }
  }

  /** The transferee stays with the transferer while the targets ring; the first answer takes the transferer's place. */
  private async blind(t: TransferRow, transferer: CallSession, peer: CallSession, progress: Progress, fail: Fail): Promise<TransferRow | null> {
    const gone = (): TransferFailReason => (transferer.isEnded ? 'both_parties_gone' : 'transferee_gone');
    const gc = await this.ring(t, this.callerOf(peer));
    // the transferer may leave (a phone often does after the 202); the transferee may not
    const { target, left } = await this.answerWhile(gc, [peer], gone);
    if (left) return fail(left);
    if (!target) return fail(await targetFailure(this.factory, gc.id));
    if (peer.isEnded) {
      const why = gone();
      await this.dropTarget(target, why);
      return fail(why);
    }
    await transfersRepo(this.deps.db).update(t.id, { transferee_call_id: target.id });
    const followed = transferer.listenerCount('replaced') > 0;
    await this.pair(peer, target, followed);
    transferer.replaceWith(target);
    progress.report(200, 'OK');
    await progress.flushed(NOTIFY_GRACE_MS);
    await transferer.hangup('normal');
    return settleTransfer(this.factory, t, { status: 'done' }, [transferer, peer, target]);
  }

  /** The transferee waits (unbridged) while the transferer consults the target; the transferer's hangup completes it. */
  private async attended(t: TransferRow, transferer: CallSession, peer: CallSession, progress: Progress, fail: Fail): Promise<TransferRow | null> {
    const gone = (): TransferFailReason => (peer.isEnded ? 'both_parties_gone' : 'transferer_gone');
    await peer.endpoint?.unbridge().catch(() => undefined);
    const giveBack = async () => {
      if (!transferer.isEnded && !peer.isEnded) await transferer.endpoint!.bridge(peer.endpoint!).catch(() => undefined);
    };
    const gc = await this.ring(t, this.callerOf(transferer));
    // nobody is left to consult the target
    const { target, left } = await this.answerWhile(gc, [transferer], gone);
    if (left) return fail(left);
    if (!target) {
      await giveBack();
      return fail(await targetFailure(this.factory, gc.id));
    }
    if (transferer.isEnded) {
      const why = gone();
      await this.dropTarget(target, why);
      return fail(why);
    }
    await transfersRepo(this.deps.db).update(t.id, { transferee_call_id: target.id, status: 'consulting' });
    await transferer.endpoint!.bridge(target.endpoint!);
    progress.report(200, 'OK');
    const followed = transferer.listenerCount('replaced') > 0;
    const outcome = await new Promise<'complete' | 'target_left' | 'peer_left'>((resolve) => {
      // prepended: the bridge bookkeeping must see the replacement before it reacts to the hangup
      transferer.prependOnceListener('hangup', () => {
        if (!peer.isEnded && !target.isEnded) transferer.replaceWith(target);
        resolve('complete');
      });
      void target.done.then(() => resolve('target_left'));
      void peer.done.then(() => resolve('peer_left'));
    });
    if (outcome === 'complete' && !peer.isEnded && !target.isEnded) {
      await this.pair(peer, target, followed);
      return settleTransfer(this.factory, t, { status: 'done' }, [transferer, peer, target]);
    }
    if (target.isEnded) {
      await giveBack();
      return fail('target_left');
    }
    // the transferee left: the target (consulting, or joined to nobody) goes too
    const why: TransferFailReason = transferer.isEnded ? 'both_parties_gone' : 'transferee_gone';
    await this.dropTarget(target, why);
    return fail(why);
  }

  /** RFC 3891 Replaces: the peers of two of a phone's dialogs are joined, both dialogs released. */
  async replaces(t: TransferRow, other: CallSession, progress: Progress = noProgress): Promise<TransferRow | null> {
    const transferer = this.factory.get(t.transferer_call_id);
    const fail: Fail = async (reason) => {
      const [status, phrase] = TRANSFER_FAIL_SIP[reason];
      progress.report(status, phrase);
      return settleTransfer(this.factory, t, { status: 'failed', reason }, [transferer, other]);
    };
    if (!transferer || transferer.isEnded) return fail('transferer_gone');
    const [x, y] = [await this.peerOf(transferer), await this.peerOf(other)];
    if (!x || !y) return fail('not_bridged');
    const followed = transferer.listenerCount('replaced') > 0 || other.listenerCount('replaced') > 0;
    await transfersRepo(this.deps.db).update(t.id, { transferee_call_id: y.id });
    await this.pair(x, y, followed);
    transferer.replaceWith(y);
    other.replaceWith(x);
    progress.report(200, 'OK');
    await progress.flushed(NOTIFY_GRACE_MS);
    await Promise.all([transferer.hangup('normal'), other.hangup('normal')]);
    return settleTransfer(this.factory, t, { status: 'done' }, [transferer, other, x, y]);
  }

  /** The live call whose SIP dialog has this Call-ID (a Replaces header names it). */
  bySipCallId(callId: string): CallSession | undefined {
    return (this.deps.calls.all() as CallSession[]).find((c) => c.dialog?.sip.callId === callId || c.row.sip_call_id === callId);
  }
}
