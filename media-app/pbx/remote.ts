/**
 * A feature code whose call is held by another node of the cluster (docs/pbx.md "Across nodes"): the
 * phone's INVITE becomes a call here (offered, not answered), a PBX leg (xnode/pbx-leg.ts) asks the
 * holding node for the call, and only when that node answers the leg is the phone answered and
 * bridged to it. A refusal of the holder reaches the phone as the SIP answer a local refusal gives;
 * the holding node lost (no heartbeat, or it stops beating while the leg is dialled) is
 * `480 <Kind> Node Lost`. Once bridged, the holder's BYE or its lapsed heartbeat hangs the phone up,
 * and the phone's hangup BYEs the leg.
 */
import { callsRepo, type Address } from '../../core/repos/calls';
import { Bridge } from '../call/bridge';
import type { CallDeps } from '../call/deps';
import { sharedSecret } from '../registrar';
import type { CallSession } from '../call/session';
import type { BridgeLegDeps, HostLeg } from '../xnode/leg';
import { dialPbxLeg, type PbxLegOutcome } from '../xnode/pbx-leg';
import { LEG_SECRET_NAME } from '../xnode/token';
import type { PbxLegClaims, PbxLegKind } from '../xnode/pbx-token';
import type { FeatureCall } from './feature-codes';

/** What the phone is told when the holder refuses (by status), per kind; anything else is 480. */
const REFUSALS: Record<PbxLegKind, { readonly [status: number]: string; readonly lost: string }> = {
  park: { 404: 'Parking Slot Empty', lost: 'Parked Call Node Lost' },
  pickup: { 404: 'Nothing To Pick Up', lost: 'Ringing Call Node Lost' },
  supervise: { 404: 'Nothing To Supervise', 486: 'Already Supervised', 501: 'Supervision Not On This Media Backend', lost: 'Supervised Call Node Lost' },
  dequeue: { 404: 'Nothing To Dequeue', lost: 'Queued Call Node Lost' },
};

export function pbxLegDeps(deps: CallDeps): BridgeLegDeps {
  return {
    srf: deps.srf,
    media: deps.media,
    redis: deps.redis,
    keyPrefix: deps.config.redisKeyPrefix,
    logger: deps.logger,
    secret: () => sharedSecret(deps.redis, deps.config.redisKeyPrefix, LEG_SECRET_NAME),
  };
}

/** One node to ask, and what for. */
export interface LegAsk {
  readonly node: string;
  readonly ask: Pick<PbxLegClaims, 'kind' | 'subjectId' | 'detail'>;
}

/**
 * Bridges the phone of `c` to a call another node holds, through a PBX leg: `asks` in order (a pickup
 * may have several ringing calls to try), the next one tried when a node answers 404 or is lost; the
 * phone gets the last refusal.
 */
export async function throughLeg(c: FeatureCall, asks: readonly LegAsk[], destination: Address): Promise<void> {
  const deps = c.park.deps;
  const kind = asks[0]?.ask.kind;
  if (!kind) throw new Error('throughLeg needs a node to ask');
  const call = await c.offer(destination);
  if (!call) return;
  let last: Extract<PbxLegOutcome, { ok: false }> | null = null;
  for (const { node, ask } of asks) {
    if (call.isEnded) return;
    const out = await dialPbxLeg(pbxLegDeps(deps), node, { ...ask, customerId: c.ext.customer_id, callId: call.id }, call.endpoint);
    if (out.ok) return bridgeToLeg(call, out.leg, kind);
    deps.logger.info({ call: call.id, node, kind, why: out.message }, 'PBX leg not up');
    last = out;
    if (!out.lost && out.status !== 404) break;
  }
  const phrases = REFUSALS[kind];
  const status = !last || last.lost ? 480 : phrases[last.status] ? last.status : 480;
  const phrase = !last || last.lost ? phrases.lost : (phrases[last.status] ?? 'Temporarily Unavailable');
  if (!c.res.finalResponseSent) c.res.send(status, phrase);
  await call.rejectWith(status);
}

async function bridgeToLeg(call: CallSession, leg: HostLeg, kind: PbxLegKind): Promise<void> {
  try {
    await call.answer();
    // the phone's call and the held call are one pair: either side leaving hangs the other up
    await Bridge.open(call, leg, { kind: 'hangup_other' }, call.deps.logger);
  } catch (err) {
    call.deps.logger.info({ err: (err as Error).message, call: call.id, kind }, 'PBX leg up, but the phone left first');
    await leg.hangup();
    await call.hangup('normal');
  }
}

/**
 * The progressing calls of other nodes whose party is extension `ext` of the customer (the leg rung to
 * it, or the call it placed), newest first: whom a supervise code asks for when none is here.
 */
export async function remoteCallsOfExtension(deps: CallDeps, customerId: string, ext: string, max = 5): Promise<{ id: string; node_id: string }[]> {
  return callsRepo(deps.db).progressingOfExtensionElsewhere(customerId, ext, deps.calls.nodeId, max);
}
