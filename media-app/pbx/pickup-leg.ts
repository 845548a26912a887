/**
 * The node running a ringing connect takes a pickup from another node (docs/pbx.md "Pickup", "Across
 * nodes"): the PBX leg (pbx/accept-leg.ts checked its signature) becomes a call of this node, as a
 * picker's INVITE does on one node, since the connect hands its ringing call to a call (connect.ts):
 * its source is the picker (read from the picker's call row, written by the asking node), its
 * destination the extension picked. The connect is taken before the leg is answered, so of two
 * pickups at once the first wins and the other's leg is refused `404 Nothing To Pick Up`.
 */
import { callsRepo, type Address } from '../../core/repos/calls';
import type { CallFactory } from '../call/factory';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import { detailExtension, type PbxLegClaims } from '../xnode/pbx-token';
import { ringingByMaster } from './pickup';

export async function takeRingingThroughLeg(factory: CallFactory, c: PbxLegClaims, req: SrfRequest, res: SrfResponse): Promise<void> {
  const deps = factory.deps;
  const extension = detailExtension(c.detail);
  if (!extension || !ringingByMaster(deps, c.customerId, c.subjectId, extension)) return void res.send(404, 'Nothing To Pick Up');
  const picker = await callsRepo(deps.db).get(c.callId);
  if (!picker || picker.customer_id !== c.customerId) return void res.send(403);
  const destination: Address = { type: 'extension', target: extension, name: 'pickup' };
  const call = await factory.inbound(req, res, { customerId: c.customerId, source: picker.source, destination });
  if (!call) return;
  // checked again: it may have been answered or picked while the leg's call was made
  const ringing = ringingByMaster(deps, c.customerId, c.subjectId, extension);
  if (!ringing?.take(call)) {
    res.send(404, 'Nothing To Pick Up');
    await call.rejectWith(404);
    return;
  }
  await call.answer().catch(async (err: Error) => {
    deps.logger.info({ err: err.message, call: call.id }, 'pickup leg not answered: the picker left');
    await call.hangup('normal');
  });
}
