/** A groupcall made on this node (transfers): written, then announced; the caller rings it. */
import type { Address, CallRow } from '../../core/repos/calls';
import { publishCall } from '../call/events';
import { groupcallJson, type GroupcallRow } from '../../core/repos/groupcalls';
import { publishResourceEvent } from '../../core/events/catalogue';
import { writeGroupcall } from '../../core/groupcalls/write';
import type { AnswerMethod, RingMethod } from '../../core/groupcalls/model';
import type { CallDeps } from '../call/deps';

export interface LocalGroupcallSpec {
  customerId: string;
  source: Address;
  destinations: Address[];
  ringMethod: RingMethod;
  answerMethod: AnswerMethod;
  flowId?: string;
  masterCallId?: string;
}

export async function createGroupcall(deps: CallDeps, spec: LocalGroupcallSpec): Promise<{ groupcall: GroupcallRow; calls: CallRow[] }> {
  const r = await writeGroupcall(deps.db, { ...spec, legs: spec.destinations.map((destination) => ({ destination })) });
  await publishResourceEvent(deps.events, 'groupcall_created', groupcallJson(r.groupcall) as never).catch(() => undefined);
  for (const c of r.calls) await publishCall(deps.events, 'call_created', c, deps.logger);
  return r;
}
