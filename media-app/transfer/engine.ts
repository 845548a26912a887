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
 * Every move goes through the transferer's Bridge (media-app/call/bridge.ts): the target takes the
 * transferer's place in it (replace, consult, join), so the connect or queue that opened it keeps
 * waiting on the same bridge, under the same rule, with the new pair.
 */
import type { Address } from '../../core/repos/calls';
import { transfersRepo, type TransferRow } from '../../core/repos/transfers';
import { TRANSFER_FAIL_SIP, type TransferFailReason } from '../../core/transfers/model';
import type { CallFactory } from '../call/factory';
import { Bridge } from '../call/bridge';
import { CallSession } from '../call/session';
import type { GroupcallRunner, RunningGroupcall } from '../groupcall/runner';
import { createGroupcall } from '../groupcall/create';
import { settleTransfer, targetByeReason, targetFailure } from './outcome';

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
  constructor(
    readonly factory: CallFactory,
    private readonly runner: GroupcallRunner,
  ) {}

  private get deps() {
    return this.factory.deps;
  }

  /** The live, answered call bridged to `call` (through its Bridge), if any. */
  peerOf(call: CallSession): CallSession | null {
    const other = call.bridge?.other(call);
    return other instanceof CallSession && !other.isEnded && other.answered ? other : null;
  }

  /**
   * A blind transfer's answered target takes the transferer's place in its bridge. If that bridge
   * closed while the targets rang (the transferer left), the transferee and the target are bridged
   * anew and go together.
   */
  private async takePlace(transferer: CallSession, peer: CallSession, target: CallSession): Promise<void> {
    const bridge = transferer.bridge;
    if (bridge && bridge.other(transferer) === peer) return bridge.replace(transferer, target);
    await Bridge.open(peer, target, { kind: 'hangup_other' }, this.deps.logger);
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
      peer = this.peerOf(transferer);
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
    await this.takePlace(transferer, peer, target);
    progress.report(200, 'OK');
    await progress.flushed(NOTIFY_GRACE_MS);
    await transferer.hangup('normal');
    return settleTransfer(this.factory, t, { status: 'done' }, [transferer, peer, target]);
  }

  /** The transferee waits (unbridged) while the transferer consults the target; the transferer's hangup completes it. */
  private async attended(t: TransferRow, transferer: CallSession, peer: CallSession, progress: Progress, fail: Fail): Promise<TransferRow | null> {
    const gone = (): TransferFailReason => (peer.isEnded ? 'both_parties_gone' : 'transferer_gone');
    const bridge = transferer.bridge;
    if (!bridge) return fail('not_bridged');
    // the transferee waits, unlinked, while the targets ring and the transferer consults
    await bridge.pause('consult');
    const giveBack = async () => {
      if (bridge.state === 'paused') await bridge.resume().catch(() => undefined);
    };
    const gc = await this.ring(t, this.callerOf(transferer));
    // nobody is left to consult the target
    const { target, left } = await this.answerWhile(gc, [transferer], gone);
    if (left) return fail(left);
    if (!target) {
      await giveBack();
      return fail(await targetFailure(this.factory, gc.id));
    }
    if (transferer.isEnded || bridge.state !== 'paused') {
      // the transferer left, or the transferee did (its leave closed the bridge)
      const why: TransferFailReason = transferer.isEnded ? gone() : 'transferee_gone';
      await this.dropTarget(target, why);
      return fail(why);
    }
    await transfersRepo(this.deps.db).update(t.id, { transferee_call_id: target.id, status: 'consulting' });
    // the transferer's hangup completes it: the bridge puts the target in its place (bridge.ts consult)
    const consultation = await bridge.consult(transferer, target);
    progress.report(200, 'OK');
    const outcome = await consultation.ended;
    if (outcome === 'complete') return settleTransfer(this.factory, t, { status: 'done' }, [transferer, peer, target]);
    // target_left: the bridge gave the transferer its transferee back
    if (outcome === 'target_left' && !peer.isEnded) return fail('target_left');
    // the transferee left (or the bridge closed): the target (consulting, or joined to nobody) goes too,
    // once the bridge's rule has dealt with the transferer (hung up, or back to its flow)
    await bridge.ended;
    const why: TransferFailReason = transferer.isEnded ? 'both_parties_gone' : 'transferee_gone';
    if (!target.isEnded) await this.dropTarget(target, why);
    return fail(outcome === 'target_left' ? 'target_left' : why);
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
    const [x, y] = [this.peerOf(transferer), this.peerOf(other)];
    const [b1, b2] = [transferer.bridge, other.bridge];
    if (!x || !y || !b1 || !b2 || b1 === b2) return fail('not_bridged');
    await transfersRepo(this.deps.db).update(t.id, { transferee_call_id: y.id });
    // y takes the transferer's place in x's bridge (under that bridge's rule); other's bridge ends merged
    await Bridge.join(b1, transferer, b2, other);
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
