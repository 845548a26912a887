/**
 * The host's side of a participant whose call is on another node: the INVITE of its bridge leg
 * (media-app/xnode/leg.ts) is accepted only with a valid signature for this conference (403
 * otherwise, whatever path it came by: straight from a node, through the edge or from anyone), for
 * a live participant of it (the conferencecall the call's node created, 480 when it already left),
 * and only when this node hosts the conference (404). The leg then is that participant in the mix:
 * the conferencecall keeps the real call id, so the API sees one participant. When the room lets it
 * go (kick, terminate, connect's other side left) the leg's BYE says why. The call's mute and hold
 * come in the INVITE and in INFOs on the leg (party-state.ts) and drive the room's mute/hold callbacks.
 */
import type { Logger } from 'pino';
import { conferencecallsRepo } from '../../core/repos/conferencecalls';
import { callNodeKey } from '../../core/commands/contracts';
import { nodeAlive } from '../xnode/address';
import type { CallDeps } from '../call/deps';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import { parseSipUri } from '../kit/sip-uri';
import { LEAVE_REASON_HEADER } from '../xnode/leg';
import { LEG_HEADER, LEG_USER_PREFIX, verifyLeg } from '../xnode/token';
import type { Room, RoomParty } from './room';
import { PARTY_STATE_HEADER, RemotePartyWatch, parsePartyState } from './party-state';

/** True for an INVITE that claims to be a bridge leg (its Request-URI or its header says so). */
export function isBridgeLeg(req: SrfRequest): boolean {
  return req.get(LEG_HEADER) !== undefined || (parseSipUri(req.uri)?.user ?? '').toLowerCase().startsWith(LEG_USER_PREFIX);
}

export interface AcceptLegDeps {
  deps: CallDeps;
  logger: Logger;
  secret(): Promise<string>;
  room(conferenceId: string): Room | undefined;
  /** How often the participant's call node is checked while its leg is in the mix (ms). */
  watchMs?: number;
}

/** The call still has a live node (call-node:<call> names it, its heartbeat runs). */
async function callNodeAlive(deps: CallDeps, callId: string): Promise<boolean> {
  const node = await deps.redis.get(deps.config.redisKeyPrefix + callNodeKey(callId));
  return !!node && (await nodeAlive(deps.redis, deps.config.redisKeyPrefix, node));
}

export async function acceptLeg(a: AcceptLegDeps, req: SrfRequest, res: SrfResponse): Promise<void> {
  const user = parseSipUri(req.uri)?.user ?? '';
  const conferenceId = user.toLowerCase().startsWith(LEG_USER_PREFIX) ? user.slice(LEG_USER_PREFIX.length) : '';
  const check = verifyLeg(await a.secret(), req.get(LEG_HEADER), { conferenceId: conferenceId || '-' });
  if (!check.ok) {
    a.logger.warn({ reason: check.reason, uri: req.uri, source: req.source_address }, 'bridge leg refused');
    return void res.send(403);
  }
  const { claims } = check;
  const room = a.room(claims.conferenceId);
  if (!room) return void res.send(404, 'Conference Not Hosted Here');
  const calls = conferencecallsRepo(a.deps.db);
  const cc = await calls.get(claims.conferencecallId);
  if (!cc || cc.conference_id !== claims.conferenceId || cc.reference_id !== claims.callId || cc.customer_id !== claims.customerId) return void res.send(403);
  if (cc.status !== 'joining' && cc.status !== 'joined') return void res.send(480, 'Participant Left');
  if (!req.body) return void res.send(488);

  const leg = await a.deps.media.createEndpoint({ remoteSdp: req.body, near: room.media.engine ?? undefined });
  let ended = false;
  const gone = new AbortController();
  let dialog;
  try {
    dialog = await a.deps.srf.createUAS(req, res, { localSdp: leg.local.sdp });
  } catch (err) {
    await leg.destroy().catch(() => undefined);
    throw err;
  }
  dialog.on('destroy', () => {
    ended = true;
    gone.abort();
  });
  // the call's mute and hold, from its node (party-state.ts): the room's participant-mute/-hold
  const partyState = new RemotePartyWatch(parsePartyState(req.get(PARTY_STATE_HEADER)));
  dialog.on('info', (info: SrfRequest, r: SrfResponse) => void r.send(partyState.report(info.get(PARTY_STATE_HEADER)) ? 200 : 400));
  const party: RoomParty = {
    get endpoint() {
      return leg.destroyed ? null : leg;
    },
    get isEnded() {
      return ended;
    },
    answer: async () => undefined,
  };
  // the call's node lost without a BYE (machine gone): its heartbeat lapses, the participant leaves
  const watch = setInterval(() => {
    void callNodeAlive(a.deps, claims.callId).then(
      (alive) => {
        if (alive || gone.signal.aborted) return;
        a.logger.warn({ conference: claims.conferenceId, conferencecall: cc.id, call: claims.callId }, "bridge leg: the call's node stopped beating; the participant leaves");
        gone.abort();
      },
      () => undefined,
    );
  }, a.watchMs ?? 1000);
  try {
    const reason = await room.join(party, cc, gone.signal, partyState);
    if (!ended) {
      ended = true;
      // not waiting for the BYE's answer: a lost node never gives one
      void dialog.destroy({ headers: { [LEAVE_REASON_HEADER]: reason } }).catch(() => undefined);
    }
  } finally {
    clearInterval(watch);
    await leg.destroy().catch(() => undefined);
  }
}
