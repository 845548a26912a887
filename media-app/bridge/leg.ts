/**
 * The participant's side of a conference hosted on another node: a SIP leg from this node straight
 * to the host's sip-server (INVITE sip:cleg.<conference>@<host>, signed: token.ts), its media
 * bridged to the call's endpoint here (as `connect` bridges two legs on one node). The host puts
 * the leg in its mix as the participant; mute, kick and recording happen there.
 *
 * The leg ends when: the host hangs it up (BYE with X-Openvoice-Leave-Reason: kicked, ejected,
 * terminated, hangup), the host dies (a BYE without a reason from its sip-server, or its heartbeat
 * lapses: checked every second), or the call here hangs up / its flow stops (we send BYE).
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Endpoint } from '../../media-engine';
import type { MediaServer } from '../../media-engine';
import type { Srf, SrfDialog, SrfRequest, SrfSentInvite } from '../srf';
import type { LeaveReason, RoomParty } from '../conference/room';
import { liveNodeSip, nodeAlive } from './address';
import { LEG_HEADER, LEG_USER_PREFIX, signLeg, type LegClaims } from './token';

export const LEAVE_REASON_HEADER = 'X-Openvoice-Leave-Reason';
const REASONS: readonly LeaveReason[] = ['hangup', 'kicked', 'ejected', 'terminated'];

export interface BridgeLegDeps {
  srf: Srf;
  media: MediaServer;
  redis: Redis;
  keyPrefix: string;
  logger: Logger;
  /** The platform secret the nodes share (secret:conference-leg). */
  secret(): Promise<string>;
  /** How often the host's heartbeat is checked while bridged (ms). */
  watchMs?: number;
}

/** The host refused the leg, or could not be reached. */
export class BridgeLegRefused extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** The leave reason a host's BYE carries; none (its sip-server hung up for a dead media-app): host_lost. */
export function leaveReasonOf(bye: { get(name: string): string | undefined } | undefined): LeaveReason {
  const r = bye?.get(LEAVE_REASON_HEADER)?.trim() as LeaveReason | undefined;
  return r && REASONS.includes(r) ? r : 'host_lost';
}

/**
 * Bridges `call` into the conference hosted on `hostNode` until the leg ends; resolves with why.
 * Throws BridgeLegRefused when the leg never comes up.
 */
export async function joinThroughLeg(d: BridgeLegDeps, call: RoomParty & { readonly done: Promise<unknown> }, hostNode: string, claims: Omit<LegClaims, 'expires'>, signal: AbortSignal): Promise<LeaveReason> {
  const addr = await liveNodeSip(d.redis, d.keyPrefix, hostNode);
  if (!addr) throw new BridgeLegRefused(0, `conference ${claims.conferenceId} is hosted on node ${hostNode}, which takes no bridge legs (no SIP address in Redis)`);
  await call.answer();
  const ep = call.endpoint;
  if (!ep || call.isEnded || signal.aborted) return 'hangup';
  const leg: Endpoint = await d.media.createEndpoint({ near: ep });
  let pending: SrfSentInvite | null = null;
  const cancel = () => {
    try { pending?.cancel(); } catch { /* already final */ }
  };
  signal.addEventListener('abort', cancel, { once: true });
  let dialog: SrfDialog;
  try {
    dialog = await d.srf.createUAC(
      `sip:${LEG_USER_PREFIX}${claims.conferenceId}@${addr}`,
      { localSdp: leg.local.sdp, headers: { [LEG_HEADER]: signLeg(await d.secret(), claims) } },
      { cbRequest: (_err, req) => void (pending = req) },
    );
  } catch (err) {
    await leg.destroy().catch(() => undefined);
    if (signal.aborted) return 'hangup';
    const status = Number((err as { status?: number }).status) || 0;
    throw new BridgeLegRefused(status, `the host of conference ${claims.conferenceId} refused the leg (${status || (err as Error).message})`);
  } finally {
    signal.removeEventListener('abort', cancel);
  }
  let hostGone = false;
  try {
    await leg.modify(dialog.remote.sdp);
    await ep.bridge(leg);
    const reason = await new Promise<LeaveReason>((resolve) => {
      const finish = (r: LeaveReason) => {
        clearInterval(watch);
        signal.removeEventListener('abort', ours);
        resolve(r);
      };
      const ours = () => finish('hangup');
      dialog.on('destroy', (bye: SrfRequest) => {
        hostGone = true;
        finish(leaveReasonOf(bye));
      });
      signal.addEventListener('abort', ours, { once: true });
      void call.done.then(ours, ours);
      const watch = setInterval(() => void nodeAlive(d.redis, d.keyPrefix, hostNode).then((alive) => !alive && finish('host_lost'), () => undefined), d.watchMs ?? 1000);
      if (signal.aborted || call.isEnded) ours();
    });
    return reason;
  } finally {
    // not waiting for the BYE's answer: a lost host never gives one
    if (!hostGone) void dialog.destroy().catch(() => undefined);
    if (!call.isEnded) await ep.unbridge().catch(() => undefined);
    await leg.destroy().catch(() => undefined);
  }
}
