/**
 * Dials an outgoing CallSession: an endpoint offers our SDP, the INVITE goes to each target in turn
 * (route fallback) until one answers, the far end rejects in a way another route would not change
 * (busy, declined, cancelled), or the dial timeout fires. 180/183 move the call to ringing.
 */
import { causeFromSipStatus, type HangupCause } from '../../core/calls/model';
import type { CallSession } from '../call/session';
import type { CallDeps } from '../call/deps';
import type { DialTarget } from './targets';
import { nameAddr } from '../sip-uri';
import { farProfileFor, NgError, type RelayLeg } from '../rtpengine';
import { mediaPath } from '../call/media-path';

/** The relay leg for a target that needs SRTP / WebRTC (owned by the call from now on), or null; throws without rtpengine. */
function relayFor(deps: CallDeps, call: CallSession, t: DialTarget): RelayLeg | null {
  const far = farProfileFor(t.mediaEncryption, t.transport);
  if (far === 'plain') return null;
  if (!deps.relay) throw new NgError('offer', 'rtpengine not configured (RTPENGINE_NG)', true);
  const leg = deps.relay.leg(call.id, far);
  call.relay = leg;
  return leg;
}

/** Final statuses after which another route is not tried. */
const FINAL = new Set([486, 487, 600, 603, 404, 484]);

export interface DialOptions {
  from: string;
  /** Display name in From. */
  fromName?: string;
  timeoutMs: number;
  headers?: Record<string, string>;
}

export type DialOutcome = { answered: true } | { answered: false; cause: HangupCause };

export async function dial(deps: CallDeps, call: CallSession, targets: DialTarget[], opts: DialOptions): Promise<DialOutcome> {
  if (!targets.length) {
    await call.finish('failure');
    return { answered: false, cause: 'failure' };
  }
  try {
    call.endpoint ??= await deps.media.createEndpoint();
  } catch (err) {
    deps.logger.error({ err: (err as Error).message, call: call.id }, 'no media endpoint for outbound call');
    await call.finish('failure');
    return { answered: false, cause: 'failure' };
  }
  let timedOut = false;
  call.after(opts.timeoutMs, () => {
    timedOut = true;
    void call.terminate('no_answer');
  });
  let cause: HangupCause = 'failure';
  let relay: RelayLeg | null = null;
  for (const t of targets) {
    relay = null;
    if (call.isEnded || timedOut) break;
    try {
      deps.logger.debug({ call: call.id, uri: t.uri, proxy: t.proxy }, 'INVITE');
      const from = nameAddr(opts.from, opts.fromName);
      // a party that needs SRTP or the WebRTC profile gets our offer rewritten by rtpengine
      relay = relayFor(deps, call, t);
      const localSdp = relay ? await relay.engineOffer(call.endpoint.local.sdp) : call.endpoint.local.sdp;
      const dialog = await deps.srf.createUAC(
        t.uri,
        {
          localSdp,
          proxy: t.proxy,
          auth: t.auth,
          headers: { From: from, ...(t.headers ?? {}), ...(opts.headers ?? {}) },
        },
        {
          cbRequest: (_err: unknown, req: { cancel(): void }) => req && call.setPendingUac(req),
          cbProvisional: (res: { status: number }) => {
            if (res.status === 180 || res.status === 183) void call.setStatus('ringing');
          },
        },
      );
      if (call.isEnded) {
        // answered after we gave up (CANCEL crossed the 200): hang up at once
        await dialog.destroy().catch(() => undefined);
        return { answered: false, cause: 'normal_clearing' };
      }
      if (dialog.remote.sdp) {
        // an answer the media (or rtpengine) refuses: the dialog goes, the next target may do better
        await mediaPath(call.endpoint, relay)
          .applyAnswer(dialog.remote.sdp)
          .catch(async (err: Error) => {
            await dialog.destroy().catch(() => undefined);
            throw err;
          });
      }
      call.attachDialog(dialog);
      await call.setStatus('progressing');
      return { answered: true };
    } catch (err) {
      const status = Number((err as { status?: number }).status);
      cause = Number.isFinite(status) ? causeFromSipStatus(status) : 'failure';
      deps.logger.debug({ call: call.id, uri: t.uri, status, err: (err as Error).message }, 'dial attempt failed');
      if (relay && call.relay === relay && !call.answered) {
        call.relay = null;
        await relay.close('dial attempt failed');
      }
      if (FINAL.has(status)) break;
    }
  }
  await call.finish(cause);
  return { answered: false, cause };
}
