/**
 * How a transfer ends, told everywhere it has to be: the row (status done | failed), the event
 * (transfer_done, or transfer_failed with its typed `fail_reason`), the flows of the calls involved
 * (`svc.transfer.id`, `svc.transfer.status`, `svc.transfer.fail_reason`) and the log.
 */
import { publishResourceEvent } from '../../core/events/catalogue';
import { callsRepo } from '../../core/repos/calls';
import { groupcallsRepo } from '../../core/repos/groupcalls';
import { transferJson, transfersRepo, type TransferRow } from '../../core/repos/transfers';
import type { TransferFailReason } from '../../core/transfers/model';
import type { CallFactory } from '../call/factory';
import type { CallSession } from '../call/session';

/** The Reason header (RFC 3326) of the BYE that hangs up a target the transfer no longer needs. */
export const targetByeReason = (why: TransferFailReason) => `SIP;cause=487;text="transfer failed: ${why}"`;

/**
 * Why no target of a groupcall answered, from its calls' hangup reasons: one that rang out makes it
 * target_no_answer, else one that was busy target_busy, else (refused, unreachable) target_rejected.
 */
export async function targetFailure(factory: CallFactory, groupcallId: string): Promise<TransferFailReason> {
  const db = factory.deps.db;
  const gc = await groupcallsRepo(db).get(groupcallId);
  const reasons = new Set<string>();
  for (const id of gc?.call_ids ?? []) {
    const row = await callsRepo(db).get(id);
    if (row) reasons.add(row.hangup_reason);
  }
  if (reasons.has('noanswer') || reasons.has('timeout')) return 'target_no_answer';
  if (reasons.has('busy')) return 'target_busy';
  return 'target_rejected';
}

/** The activeflows on this node of the given calls and of their masters (a connect's flow runs on the master). */
function flowsOf(factory: CallFactory, calls: (CallSession | undefined | null)[]) {
  const seen = new Set<string>();
  const out = [];
  for (const c of calls) {
    for (const call of [c, c ? factory.get(c.row.master_call_id) : undefined]) {
      const id = call?.row.activeflow_id;
      if (!id || seen.has(id)) continue;
      seen.add(id);
      const flow = factory.manager.get(id);
      if (flow) out.push(flow);
    }
  }
  return out;
}

/** Writes the end of a transfer and tells the event stream and the flows of `involved`. */
export async function settleTransfer(
  factory: CallFactory,
  t: TransferRow,
  end: { status: 'done' } | { status: 'failed'; reason: TransferFailReason },
  involved: (CallSession | undefined | null)[],
): Promise<TransferRow | null> {
  const deps = factory.deps;
  const failReason = end.status === 'failed' ? end.reason : '';
  if (end.status === 'failed') deps.logger.info({ transfer: t.id, reason: failReason }, 'transfer failed');
  const row = await transfersRepo(deps.db).update(t.id, { status: end.status });
  for (const flow of flowsOf(factory, involved)) {
    flow.vars.set('svc.transfer.id', t.id);
    flow.vars.set('svc.transfer.status', end.status);
    flow.vars.set('svc.transfer.fail_reason', failReason);
  }
  if (row) {
    const type = end.status === 'done' ? 'transfer_done' : 'transfer_failed';
    await publishResourceEvent(deps.events, type, { ...transferJson(row), fail_reason: failReason }).catch((err: Error) =>
      deps.logger.warn({ err: err.message, transfer: t.id }, 'transfer event not published'),
    );
  }
  return row;
}
