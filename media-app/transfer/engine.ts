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
import type { CallFactory } from '../call/factory';
import type { CallSession } from '../call/session';
import type { GroupcallRunner } from '../groupcall/runner';
import { createGroupcall } from '../groupcall/create';

export type Progress = (sipStatus: number, reason: string) => Promise<void> | void;

export class TransferError extends Error {}

export class TransferEngine {
  /** Pairs this engine bridged (a transferred pair has no connect around it unless one followed). */
  private readonly peers = new Map<string, CallSession>();

  constructor(private readonly factory: CallFactory, private readonly runner: GroupcallRunner) {}

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
    const rows = (await this.deps.db('calls').where({ master_call_id: call.id }).whereNot({ status: 'hangup' }).select('id')) as { id: string }[];
    for (const { id } of rows) {
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

  private async ring(t: TransferRow, near: CallSession, source: Address) {
    const { groupcall } = await createGroupcall(this.deps, {
      customerId: t.customer_id,
      source,
      destinations: t.transferee_addresses,
      ringMethod: 'ring_all',
      answerMethod: 'hangup_others',
    });
    await transfersRepo(this.deps.db).update(t.id, { groupcall_id: groupcall.id });
    void near;
    return this.runner.ring(groupcall);
  }

  /** Executes a transfer row; resolves when it is done or has failed (progress for REFER's NOTIFYs). */
  async execute(t: TransferRow, progress: Progress = () => undefined): Promise<TransferRow | null> {
    const repo = transfersRepo(this.deps.db);
    const transferer = this.factory.get(t.transferer_call_id);
    const fail = async (status: number, why: string) => {
      this.deps.logger.info({ transfer: t.id, why }, 'transfer failed');
      await progress(status, why);
      return repo.update(t.id, { status: 'failed' });
    };
    if (!transferer || transferer.isEnded || transferer.status !== 'progressing') return fail(481, 'transferer call is not up');
    const peer = await this.peerOf(transferer);
    if (!peer) return fail(488, 'transferer call is not bridged to anyone');
    await progress(100, 'Trying');
    if (t.type === 'blind') {
      const gc = await this.ring(t, peer, this.callerOf(peer));
      const target = await gc.answered;
      if (!target || transferer.isEnded && peer.isEnded) return fail(target ? 487 : 480, 'no target answered');
      if (peer.isEnded) {
        await target.hangup('normal');
        return fail(487, 'the transferee left');
      }
      await repo.update(t.id, { transferee_call_id: target.id });
      const followed = transferer.listenerCount('replaced') > 0;
      await this.pair(peer, target, followed);
      transferer.replaceWith(target);
      await progress(200, 'OK');
      await transferer.hangup('normal');
      return repo.update(t.id, { status: 'done' });
    }
    // attended: consult first
    await peer.endpoint?.unbridge().catch(() => undefined);
    const gc = await this.ring(t, transferer, transferer.row.direction === 'incoming' ? transferer.row.source : transferer.row.destination);
    const target = await gc.answered;
    const giveBack = async () => {
      if (!transferer.isEnded && !peer.isEnded) await transferer.endpoint!.bridge(peer.endpoint!).catch(() => undefined);
    };
    if (!target || transferer.isEnded) {
      if (target) await target.hangup('normal');
      await giveBack();
      return fail(480, 'no target answered');
    }
    await repo.update(t.id, { transferee_call_id: target.id, status: 'consulting' });
    await transferer.endpoint!.bridge(target.endpoint!);
    await progress(200, 'OK');
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
      return repo.update(t.id, { status: 'done' });
    }
    if (outcome === 'target_left') await giveBack();
    if (outcome === 'peer_left') await target.hangup('normal');
    return repo.update(t.id, { status: 'failed' });
  }

  /** RFC 3891 Replaces: the peers of two of a phone's dialogs are joined, both dialogs released. */
  async replaces(t: TransferRow, other: CallSession, joined: () => Promise<void> | void = () => undefined): Promise<TransferRow | null> {
    const repo = transfersRepo(this.deps.db);
    const transferer = this.factory.get(t.transferer_call_id);
    if (!transferer || transferer.isEnded) return repo.update(t.id, { status: 'failed' });
    const [x, y] = [await this.peerOf(transferer), await this.peerOf(other)];
    if (!x || !y) return repo.update(t.id, { status: 'failed' });
    const followed = transferer.listenerCount('replaced') > 0 || other.listenerCount('replaced') > 0;
    await repo.update(t.id, { transferee_call_id: y.id });
    await this.pair(x, y, followed);
    transferer.replaceWith(y);
    other.replaceWith(x);
    await joined();
    await Promise.all([transferer.hangup('normal'), other.hangup('normal')]);
    return repo.update(t.id, { status: 'done' });
  }

  /** The live call whose SIP dialog has this Call-ID (a Replaces header names it). */
  bySipCallId(callId: string): CallSession | undefined {
    return (this.deps.calls.all() as CallSession[]).find((c) => c.dialog?.sip.callId === callId || c.row.sip_call_id === callId);
  }
}
