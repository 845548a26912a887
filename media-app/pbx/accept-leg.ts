/**
 * The holding node's side of a PBX leg (docs/pbx.md "Across nodes"; the asking side is
 * media-app/xnode/pbx-leg.ts): an INVITE to `pleg.<kind>.<call>` is taken only with a valid
 * signature for that kind and call (403 otherwise, whatever path it came by), then given to the
 * feature that holds the call:
 *
 *   park       the call parked here in the signed slot takes the leg in its holder's place
 *              (404 Parking Slot Empty when it is not parked here any more);
 *   pickup     the ringing connect whose master is the signed call is answered toward the leg, its
 *              ringing legs cancelled (404 Nothing To Pick Up when answered or picked meanwhile);
 *   supervise  the signed call is supervised in the signed mode with the leg as the supervisor
 *              (404 Nothing To Supervise, 486 Already Supervised);
 *   dequeue    the signed queuecall's caller, waiting here, is taken by the asking node's <Dial><Queue>
 *              (media-app/queue/dequeue-leg.ts; 404 Nothing To Dequeue when it is not waiting here).
 */
import { parseSipUri } from '../kit/sip-uri';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import { sharedSecret } from '../registrar';
import { LEG_SECRET_NAME } from '../xnode/token';
import { PBX_LEG_HEADER, verifyPbxLeg, type PbxLegClaims } from '../xnode/pbx-token';
import { answerPbxLeg } from '../xnode/pbx-answer';
import type { CallDeps } from '../call/deps';
import type { CallFactory } from '../call/factory';
import { takeRingingThroughLeg } from './pickup-leg';
import { SUPERVISE_MODES } from '../../core/pbx/supervisions';
import type { ParkService } from './park';
import { SuperviseError, superviseRefusal, type SupervisorService } from './supervise';

/** The queue subsystem's end of a dequeue leg (media-app/queue/dequeue-leg.ts), when it runs on this node. */
export interface DequeueLegTaker {
  takeThroughLeg(c: PbxLegClaims, req: SrfRequest, res: SrfResponse): Promise<void>;
}

export interface PbxLegHandlers {
  deps: CallDeps;
  factory: CallFactory;
  park: ParkService;
  supervisor: SupervisorService;
  queues?: DequeueLegTaker;
}

type Handler = (h: PbxLegHandlers, c: PbxLegClaims, req: SrfRequest, res: SrfResponse) => Promise<void>;

const KINDS: Record<PbxLegClaims['kind'], Handler> = {
  park: async (h, c, req, res) => {
    const slot = /^\d{1,9}$/.test(c.detail) ? Number(c.detail) : NaN;
    if (!Number.isSafeInteger(slot)) return void res.send(400);
    const r = await h.park.retrieveThroughLeg(c.customerId, slot, c.subjectId, c.callId, (near) => answerPbxLeg(h.deps, req, res, c, near));
    if (r === 'empty') res.send(404, 'Parking Slot Empty');
  },
  pickup: (h, c, req, res) => takeRingingThroughLeg(h.factory, c, req, res),
  dequeue: async (h, c, req, res) => {
    if (!h.queues) return void res.send(404, 'Nothing To Dequeue');
    await h.queues.takeThroughLeg(c, req, res);
  },
  supervise: async (h, c, req, res) => {
    const mode = SUPERVISE_MODES.find((m) => m === c.detail);
    if (!mode) return void res.send(400);
    const target = h.supervisor.callById(c.customerId, c.subjectId);
    if (!target) return void res.send(404, 'Nothing To Supervise');
    try {
      h.supervisor.check(target);
    } catch (err) {
      if (!(err instanceof SuperviseError)) throw err;
      return void res.send(...superviseRefusal(err.why));
    }
    const leg = await answerPbxLeg(h.deps, req, res, c, target.endpoint);
    if (!leg) return;
    // the supervisor's call is the asking node's (supervise_started's supervisor_call_id)
    await h.supervisor.start(target, leg, mode, null, c.callId).catch(async (err: Error) => {
      h.deps.logger.info({ err: err.message, call: target.id }, 'supervision through a leg failed');
      await leg.hangup('nothing_to_supervise');
    });
  },
};

export async function acceptPbxLeg(h: PbxLegHandlers, req: SrfRequest, res: SrfResponse): Promise<void> {
  const user = parseSipUri(req.uri)?.user ?? '';
  const check = verifyPbxLeg(await sharedSecret(h.deps.redis, h.deps.config.redisKeyPrefix, LEG_SECRET_NAME), req.get(PBX_LEG_HEADER), { user });
  if (!check.ok) {
    h.deps.logger.warn({ reason: check.reason, uri: req.uri, source: req.source_address }, 'PBX leg refused');
    return void res.send(403);
  }
  await KINDS[check.claims.kind](h, check.claims, req, res);
}
