/**
 * The participant's side of a conference hosted on another node: a SIP leg from this node straight
 * to the host's sip-server (INVITE sip:cleg.<conference>@<host>, signed: token.ts), its media
 * joined to the call's endpoint here by a Bridge (media-app/call/bridge.ts), as `connect` joins two
 * calls on one node. The leg is not a CallSession: its INVITE goes through the node's UAC primitive
 * (outbound/uac.ts `sendInvite`, as the dialler's attempts do) but not through the dialler (no Call row,
 * no route fallback, no dial timeout of its own; the host's answer or refusal ends it). The host puts
 * the leg in its mix as the participant; mute, kick and recording happen there. The call's own mute
 * and hold go to the host in the INVITE and an INFO per change (conference/party-state.ts), for the
 * room's participant-mute/-hold callbacks.
 *
 * The leg ends when: the host hangs it up (BYE with X-Openvoice-Leave-Reason: kicked, ejected,
 * terminated, hangup), the host dies (a BYE without a reason from its sip-server, or its heartbeat
 * lapses: checked every second), or the call here hangs up / its flow stops (we send BYE).
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CallEndpoint } from '../media-server/endpoint';
import type { MediaPort } from '../media-server/port';
import type { Srf, SrfDialog, SrfRequest, SrfSentInvite } from '../kit/srf';
import type { LeaveReason } from '../conference/room';
import { Bridge, type BridgeParty } from '../call/bridge';
import type { CallSession } from '../call/session';
import { sendInvite } from '../outbound/uac';
import { liveNodeSip, nodeAlive } from './address';
import { LEG_HEADER, LEG_USER_PREFIX, signLeg, type LegClaims } from './token';
import { PARTY_STATE_HEADER, callPartyState, encodePartyState } from '../conference/party-state';

export const LEAVE_REASON_HEADER = 'X-Openvoice-Leave-Reason';
const REASONS: readonly LeaveReason[] = ['hangup', 'kicked', 'ejected', 'terminated'];

export interface BridgeLegDeps {
  srf: Srf;
  media: MediaPort;
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
  constructor(
    readonly status: number,
    message: string,
  ) {
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
export async function joinThroughLeg(d: BridgeLegDeps, call: CallSession, hostNode: string, claims: Omit<LegClaims, 'expires'>, signal: AbortSignal): Promise<LeaveReason> {
  const addr = await liveNodeSip(d.redis, d.keyPrefix, hostNode);
  if (!addr) throw new BridgeLegRefused(0, `conference ${claims.conferenceId} is hosted on node ${hostNode}, which takes no bridge legs (no SIP address in Redis)`);
  await call.answer();
  const ep = call.endpoint;
  if (!ep || call.isEnded || signal.aborted) return 'hangup';
  const leg: CallEndpoint = await d.media.createEndpoint({ near: ep });
  let pending: SrfSentInvite | null = null;
  const cancel = () => {
    try {
      pending?.cancel();
    } catch {
      /* already final */
    }
  };
  signal.addEventListener('abort', cancel, { once: true });
  let dialog: SrfDialog;
  try {
    // the node's one UAC primitive (outbound/uac.ts): the host's sip-server takes the signed leg without digest
    dialog = await sendInvite(
      d.srf,
      { uri: `sip:${LEG_USER_PREFIX}${claims.conferenceId}@${addr}` },
      {
        localSdp: leg.local.sdp,
        headers: { [LEG_HEADER]: signLeg(await d.secret(), claims), [PARTY_STATE_HEADER]: encodePartyState(callPartyState(call)) },
        onRequest: (req) => void (pending = req),
      },
    );
  } catch (err) {
    await leg.destroy().catch(() => undefined);
    if (signal.aborted) return 'hangup';
    const status = Number((err as { status?: number }).status) || 0;
    throw new BridgeLegRefused(status, `the host of conference ${claims.conferenceId} refused the leg (${status || (err as Error).message})`);
  } finally {
    signal.removeEventListener('abort', cancel);
  }
  const party = new HostLeg(`xnode-leg:${claims.conferenceId}`, leg, dialog);
  dialog.on('destroy', (bye: SrfRequest) => party.end(leaveReasonOf(bye), false));
  const ours = () => void party.hangup();
  signal.addEventListener('abort', ours, { once: true });
  const unreport = reportPartyState(call, dialog, d.logger);
  const watch = setInterval(
    () =>
      void nodeAlive(d.redis, d.keyPrefix, hostNode).then(
        (alive) => !alive && party.end('host_lost', true),
        () => undefined,
      ),
    d.watchMs ?? 1000,
  );
  try {
    await leg.modify(dialog.remote.sdp);
    // the call's flow waits on the leg: the host's end returns it to its flow, its own end BYEs the leg
    const bridge = await Bridge.open(call, party, { kind: 'return_to_flow', owner: call }, d.logger).catch((err: Error) => {
      d.logger.info({ err: err.message, call: call.id }, 'conference leg not bridged: the call left first');
      return null;
    });
    if (!bridge || signal.aborted) void party.hangup();
    const reason = await party.done;
    await bridge?.ended;
    return reason;
  } finally {
    clearInterval(watch);
    unreport();
    signal.removeEventListener('abort', ours);
    await party.hangup();
    await leg.destroy().catch(() => undefined);
  }
}

/**
 * The call's mute and hold, each change sent to the host as an INFO on the leg (one after another, in
 * order), so that the room sends participant-mute/-hold for it; returns the stop.
 */
function reportPartyState(call: CallSession, dialog: SrfDialog, logger: Logger): () => void {
  let last = encodePartyState(callPartyState(call));
  let chain = Promise.resolve();
  const onUpdate = () => {
    const now = encodePartyState(callPartyState(call));
    if (now === last) return;
    last = now;
    chain = chain
      .then(() => dialog.request({ method: 'INFO', headers: { [PARTY_STATE_HEADER]: now } }))
      .then(
        () => undefined,
        (err: Error) => logger.info({ err: err.message, call: call.id }, 'conference leg: the party state INFO failed'),
      );
  };
  call.on('updated', onUpdate);
  return () => call.off('updated', onUpdate);
}

/**
 * The leg as a side of the call's Bridge: it ends with the host's BYE (its leave reason), a lapsed
 * heartbeat (host_lost) or our hangup (hangup: a BYE, not waited for: a lost host never answers).
 * The PBX legs (pbx-leg.ts) are sides of the same kind.
 */
export class HostLeg implements BridgeParty {
  readonly done: Promise<LeaveReason>;
  private resolveDone!: (r: LeaveReason) => void;
  private over = false;

  constructor(
    readonly id: string,
    readonly endpoint: CallEndpoint,
    private readonly dialog: SrfDialog,
  ) {
    this.done = new Promise((r) => (this.resolveDone = r));
  }

  get isEnded(): boolean {
    return this.over;
  }

  /** Ended for `reason`; `bye`: the dialog is still up on our side and gets a BYE. */
  end(reason: LeaveReason, bye: boolean): void {
    if (this.over) return;
    this.over = true;
    if (bye) void this.dialog.destroy().catch(() => undefined);
    this.resolveDone(reason);
  }

  hangup(): Promise<void> {
    this.end('hangup', true);
    return Promise.resolve();
  }
}
