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
import type { SrfSentInvite } from '../srf';
import { callSipIdsRepo } from '../../core/repos/call-sip-ids';

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
  for (const t of targets) {
    if (call.isEnded || timedOut) break;
    try {
      deps.logger.debug({ call: call.id, uri: t.uri, proxy: t.proxy }, 'INVITE');
      const from = nameAddr(opts.from, opts.fromName);
      const dialog = await deps.srf.createUAC(
        t.uri,
        {
          localSdp: call.endpoint.local.sdp,
          proxy: t.proxy,
          auth: t.auth,
          headers: { From: from, ...(t.headers ?? {}), ...(opts.headers ?? {}) },
        },
        {
          cbRequest: (_err: unknown, req: SrfSentInvite) => {
            if (!req) return;
            call.setPendingUac(req);
            // each attempt's Call-ID: the timeline's SIP ladder finds the captured messages by it
            const sipCallId = req.get('Call-ID');
            if (sipCallId) void callSipIdsRepo(deps.db).add(call.id, sipCallId).catch((err: Error) => deps.logger.debug({ err: err.message, call: call.id }, 'Call-ID not recorded'));
          },
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
      if (dialog.remote.sdp) await call.endpoint.modify(dialog.remote.sdp);
      call.attachDialog(dialog);
      await call.setStatus('progressing');
      return { answered: true };
    } catch (err) {
      const status = Number((err as { status?: number }).status);
      cause = Number.isFinite(status) ? causeFromSipStatus(status) : 'failure';
      deps.logger.debug({ call: call.id, uri: t.uri, status, err: (err as Error).message }, 'dial attempt failed');
      if (FINAL.has(status)) break;
    }
  }
  await call.finish(cause);
  return { answered: false, cause };
}
