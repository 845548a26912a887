/**
 * Dials an outgoing CallSession: an endpoint offers our SDP, the INVITE goes to each target in turn
 * (route fallback; the contacts of one extension ring together) until one answers, the far end rejects in a way another route would not change
 * (busy, declined, cancelled), or the dial timeout fires. 180/183 move the call to ringing.
 */
import { causeFromSipStatus, type HangupCause } from '../../core/calls/model';
import type { CallSession } from '../call/session';
import type { CallDeps } from '../call/deps';
import type { DialTarget } from './targets';
import type { PendingUac } from '../call/session';
import { nameAddr } from '../sip-uri';
import { farProfileFor, NgError, type RelayLeg } from '../rtpengine';
import { mediaPath } from '../call/media-path';

/** A relay leg for a target that needs SRTP / WebRTC (the dialler gives the answering one to the call), or null; throws without rtpengine. */
function relayFor(deps: CallDeps, call: CallSession, t: DialTarget): RelayLeg | null {
  const far = farProfileFor(t.mediaEncryption, t.transport);
  if (far === 'plain') return null;
  if (!deps.relay) throw new NgError('offer', 'rtpengine not configured (RTPENGINE_NG)', true);
  return deps.relay.leg(call.id, far);
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
  const from = nameAddr(opts.from, opts.fromName);
  for (const step of ringSteps(targets)) {
    if (call.isEnded || timedOut) break;
    // a party that needs SRTP or the WebRTC profile gets our offer rewritten by rtpengine: one relay
    // leg per contact of the step; the answering contact's leg becomes the call's, the others close
    const legs: (RelayLeg | null)[] = [];
    let relay: RelayLeg | null = null;
    const closeLegs = async (keep: RelayLeg | null, reason: string) => {
      for (const l of legs) if (l && l !== keep) await l.close(reason).catch(() => undefined);
    };
    try {
      const offers: string[] = [];
      for (const t of step) {
        const leg = relayFor(deps, call, t);
        legs.push(leg);
        offers.push(leg ? await leg.engineOffer(call.endpoint.local.sdp) : call.endpoint.local.sdp);
      }
      const won = step.length === 1 ? { dialog: await invite(deps, call, step[0]!, offers[0]!, from, opts), index: 0 } : await ringTogether(deps, call, step, offers, from, opts);
      const dialog = won.dialog;
      relay = legs[won.index] ?? null;
      await closeLegs(relay, 'another contact answered');
      if (relay) call.relay = relay;
      if (call.isEnded) {
        // answered after we gave up (CANCEL crossed the 200): hang up at once
        await dialog.destroy().catch(() => undefined);
        await closeLegs(null, 'call ended');
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
      deps.logger.debug({ call: call.id, uris: step.map((t) => t.uri), status, err: (err as Error).message }, 'dial attempt failed');
      if (relay && call.relay === relay && !call.answered) call.relay = null;
      await closeLegs(call.relay, 'dial attempt failed');
      if (FINAL.has(status)) break;
    }
  }
  await call.finish(cause);
  return { answered: false, cause };
}

type UacDialog = Awaited<ReturnType<CallDeps['srf']['createUAC']>>;

/** Targets in the order they are tried; neighbours of one ring group (an extension's contacts) form one step. */
function ringSteps(targets: DialTarget[]): DialTarget[][] {
  const steps: DialTarget[][] = [];
  for (const t of targets) {
    const last = steps[steps.length - 1];
    if (t.ringGroup && last?.[0]?.ringGroup === t.ringGroup) last.push(t);
    else steps.push([t]);
  }
  return steps;
}

/** One INVITE; `onRequest` sees the request as sent (to cancel it), `onFail` nothing: a rejection throws. */
function invite(deps: CallDeps, call: CallSession, t: DialTarget, localSdp: string, from: string, opts: DialOptions, onRequest?: (req: PendingUac) => void): Promise<UacDialog> {
  deps.logger.debug({ call: call.id, uri: t.uri, proxy: t.proxy }, 'INVITE');
  return deps.srf.createUAC(
    t.uri,
    {
      localSdp,
      proxy: t.proxy,
      auth: t.auth,
      headers: { From: from, ...(t.headers ?? {}), ...(opts.headers ?? {}) },
    },
    {
      cbRequest: (_err: unknown, req: PendingUac) => req && (onRequest ? onRequest(req) : call.setPendingUac(req)),
      cbProvisional: (res: { status: number }) => {
        if (res.status === 180 || res.status === 183) void call.setStatus('ringing');
      },
    },
  );
}

/**
 * Rings every target of the step at once (a desk phone and a browser of one extension): the first to
 * answer wins and the others are cancelled (a late 2xx is hung up); when none answers, the failure
 * that says most wins: a decline or busy (6xx, 486) over the rest (RFC 3261 16.7, simplified).
 */
function ringTogether(deps: CallDeps, call: CallSession, step: DialTarget[], offers: string[], from: string, opts: DialOptions): Promise<{ dialog: UacDialog; index: number }> {
  const pending = new Set<PendingUac>();
  const cancelAll = (): void => {
    for (const r of pending) {
      try { r.cancel(); } catch { /* already final */ }
    }
    pending.clear();
  };
  call.setPendingUac({ cancel: cancelAll });
  return new Promise<{ dialog: UacDialog; index: number }>((resolve, reject) => {
    let winner: UacDialog | undefined;
    let failures: unknown[] = [];
    step.forEach((t, index) => {
      let mine: PendingUac | undefined;
      invite(deps, call, t, offers[index]!, from, opts, (req) => {
        mine = req;
        if (winner || call.isEnded) { try { req.cancel(); } catch { /* final */ } } else pending.add(req);
      }).then((dialog) => {
        if (mine) pending.delete(mine);
        if (winner) { void dialog.destroy().catch(() => undefined); return; }
        winner = dialog;
        cancelAll();
        resolve({ dialog, index });
      }, (err: unknown) => {
        if (mine) pending.delete(mine);
        failures.push(err);
        if (!winner && failures.length === step.length) {
          const rank = (e: unknown) => { const s = Number((e as { status?: number }).status); return s >= 600 ? 3 : s === 486 ? 2 : Number.isFinite(s) ? 1 : 0; };
          reject(failures.reduce((a, b) => (rank(b) > rank(a) ? b : a)));
          failures = [];
        }
      });
    });
  });
}
