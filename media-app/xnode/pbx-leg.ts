/**
 * The asking side of a PBX leg (docs/pbx.md "Across nodes"): a phone on this node dialled a park
 * slot whose call is parked on another node (or a pickup of a call ringing there, or a supervise code
 * for a call there). This node sends a signed INVITE (pbx-token.ts) straight to the holding node's
 * sip-server; that node answers it with the call it holds bridged to the leg (media-app/pbx/
 * accept-leg.ts), or refuses it (404 the slot emptied, nothing ringing any more; 403 not signed;
 * 486 supervised already). Only once the leg is up is the phone's INVITE answered and bridged to it,
 * so every refusal reaches the phone as a SIP answer (its call, offered meanwhile, ends refused).
 *
 * Like the conference's leg (leg.ts) it is not a CallSession: the UAC primitive sends it (outbound/
 * uac.ts), and it ends with the holder's BYE, our hangup, or the holder's heartbeat lapsing (checked
 * every second, also while the INVITE is pending: a dead node's INVITE is cancelled at once rather
 * than waiting for SIP's 32 s).
 */
import type { CallEndpoint } from '../media-server/endpoint';
import type { SrfDialog, SrfRequest, SrfSentInvite } from '../kit/srf';
import { createCallEndpoint } from '../call/endpoint';
import { sendInvite } from '../outbound/uac';
import { liveNodeSip, nodeAlive } from './address';
import { HostLeg, leaveReasonOf, type BridgeLegDeps } from './leg';
import { PBX_LEG_HEADER, pbxLegUser, signPbxLeg, type PbxLegClaims } from './pbx-token';

/** Why a PBX leg did not come up: the holder's SIP status, or `lost` (the node is gone or stopped beating). */
export type PbxLegOutcome = { ok: true; leg: HostLeg } | { ok: false; status: number; lost: boolean; message: string };

/** Resolves 'left' once `signal` aborts (never without one); release() drops its listener. */
function untilAborted(signal: AbortSignal | undefined): { promise: Promise<'left'>; release(): void } {
  let onAbort = (): void => undefined;
  const promise = new Promise<'left'>((r) => {
    onAbort = () => r('left');
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
  return { promise, release: () => signal?.removeEventListener('abort', onAbort) };
}

/**
 * Dials the holding node `node` for the call `claims` name (its endpoint made `near` the asking call's,
 * on the same media worker); resolves once the leg is up or refused. `signal` aborting before the answer
 * (the asking call left) CANCELs the INVITE: 487, not lost.
 */
export async function dialPbxLeg(d: BridgeLegDeps, node: string, claims: Omit<PbxLegClaims, 'expires'>, near: CallEndpoint | null, signal?: AbortSignal): Promise<PbxLegOutcome> {
  let header: string;
  try {
    header = signPbxLeg(await d.secret(), claims);
  } catch (err) {
    return { ok: false, status: 0, lost: false, message: `the leg cannot be signed: ${(err as Error).message}` };
  }
  const addr = await liveNodeSip(d.redis, d.keyPrefix, node);
  if (!addr) return { ok: false, status: 0, lost: true, message: `node ${node} is not alive (no heartbeat or no SIP address)` };
  const made = await createCallEndpoint(d, near ? { near } : {});
  if ('error' in made) return { ok: false, status: 503, lost: false, message: `no media endpoint for the leg: ${made.error}` };
  const ep = made.endpoint;
  const pending: { req: SrfSentInvite | null } = { req: null };
  let party: HostLeg | null = null;
  let markLost!: () => void;
  const lost = new Promise<'lost'>((r) => (markLost = () => r('lost')));
  let isLost = false;
  const watch = setInterval(
    () =>
      void nodeAlive(d.redis, d.keyPrefix, node).then(
        (alive) => {
          if (alive || isLost) return;
          isLost = true;
          d.logger.warn({ node, kind: claims.kind, subject: claims.subjectId }, 'PBX leg: the holding node stopped beating');
          markLost();
          party?.end('host_lost', true);
        },
        () => undefined,
      ),
    d.watchMs ?? 1000,
  );
  const invite = sendInvite(d.srf, { uri: `sip:${pbxLegUser(claims)}@${addr}` }, { localSdp: ep.local.sdp, headers: { [PBX_LEG_HEADER]: header }, onRequest: (req) => void (pending.req = req) });
  const fail = async (o: Omit<Extract<PbxLegOutcome, { ok: false }>, 'ok'>): Promise<PbxLegOutcome> => {
    clearInterval(watch);
    await ep.destroy().catch(() => undefined);
    return { ok: false, ...o };
  };
  let dialog: SrfDialog;
  const left = untilAborted(signal);
  try {
    const first = await Promise.race([invite, lost, left.promise]);
    if (first === 'lost' || first === 'left') {
      try {
        pending.req?.cancel();
      } catch {
        /* already final */
      }
      // a late answer gets its BYE
      void invite.then((late) => late.destroy().catch(() => undefined)).catch(() => undefined);
      if (first === 'left') return await fail({ status: 487, lost: false, message: 'the asking call left while the leg was dialled' });
      return await fail({ status: 0, lost: true, message: `node ${node} stopped beating while the leg was dialled` });
    }
    dialog = first;
  } catch (err) {
    const status = Number((err as { status?: number }).status) || 0;
    return await fail({ status, lost: isLost || status === 0 || status === 408, message: `node ${node} refused the leg (${status || (err as Error).message})` });
  } finally {
    left.release();
  }
  const leg = new HostLeg(`xnode-pbx-leg:${claims.kind}:${claims.subjectId}`, ep, dialog);
  party = leg;
  dialog.on('destroy', (bye: SrfRequest) => leg.end(leaveReasonOf(bye), false));
  void leg.done.then(async () => {
    clearInterval(watch);
    await ep.destroy().catch(() => undefined);
  });
  if (isLost) leg.end('host_lost', true);
  try {
    await ep.modify(dialog.remote.sdp);
  } catch (err) {
    leg.end('hangup', true);
    return { ok: false, status: 488, lost: false, message: `the leg's answer could not be used: ${(err as Error).message}` };
  }
  return { ok: true, leg };
}
