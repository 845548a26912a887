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
import type { SrfSentInvite } from '../srf';
import { callSipIdsRepo } from '../../core/repos/call-sip-ids';
import { nameAddr } from '../sip-uri';
import { farProfileFor, NgError, type RelayLeg } from '../rtpengine';
import { mediaPath } from '../call/media-path';
import type { AudioCodecName } from '../../core/calls/codecs';

/**
 * The relay leg for a target that needs SRTP / WebRTC, or null; throws without rtpengine. The attempt
 * owns it (closed when the attempt fails); the call takes it over when that target answers.
 */
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
  /** The From of one target when it is not `from` (a PSTN target's caller id: DialTarget.callerId). */
  fromFor?: (t: DialTarget) => string | undefined;
  timeoutMs: number;
  headers?: Record<string, string>;
}

export type DialOutcome = { answered: true } | { answered: false; cause: HangupCause };

/**
 * The codecs of our offer: the targets' list when they share one (one extension's phones, one
 * provider), else none (the engine's default, G.711 first): the offer is made once for every target.
 */
export function offerCodecs(targets: readonly DialTarget[]): AudioCodecName[] | undefined {
  const first = targets[0]?.codecs;
  if (!first) return undefined;
  return targets.every((t) => t.codecs && t.codecs.join() === first.join()) ? first : undefined;
}

export async function dial(deps: CallDeps, call: CallSession, targets: DialTarget[], opts: DialOptions): Promise<DialOutcome> {
  if (!targets.length) {
    await call.finish('failure');
    return { answered: false, cause: 'failure' };
  }
  try {
    call.endpoint ??= await deps.media.createEndpoint({ codecs: offerCodecs(targets) });
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
  const fromOf = (t: DialTarget): string => opts.fromFor?.(t) ?? from;
  for (const step of ringSteps(targets)) {
    if (call.isEnded || timedOut) break;
    try {
      const { dialog, relay } = step.length === 1 ? await invite(deps, call, step[0]!, fromOf(step[0]!), opts) : await ringTogether(deps, call, step, fromOf, opts);
      if (call.isEnded) {
        // answered after we gave up (CANCEL crossed the 200): hang up at once
        await dialog.destroy().catch(() => undefined);
        await relay?.close('answered after the call ended');
        return { answered: false, cause: 'normal_clearing' };
      }
      // the answering party's relay leg (if any) is the call's from now on: its close cascades
      if (relay) call.relay = relay;
      if (dialog.remote.sdp) {
        // an answer the media (or rtpengine) refuses: the dialog goes, the next target may do better
        await mediaPath(call.endpoint, relay)
          .applyAnswer(dialog.remote.sdp)
          .catch(async (err: Error) => {
            await dialog.destroy().catch(() => undefined);
            throw err;
          });
      }
      // the contacts of one step are one extension's: one dtmf_mode
      if (step[0]?.dtmfMode) call.dtmfMode = step[0].dtmfMode;
      // a close while the answer was applied: the session refuses the dialog and BYEs it
      if (!call.attachDialog(dialog)) return { answered: false, cause: 'normal_clearing' };
      await call.setStatus('progressing');
      return { answered: true };
    } catch (err) {
      const status = Number((err as { status?: number }).status);
      cause = Number.isFinite(status) ? causeFromSipStatus(status) : 'failure';
      deps.logger.debug({ call: call.id, uris: step.map((t) => t.uri), status, err: (err as Error).message }, 'dial attempt failed');
      if (call.relay && !call.answered) {
        // the answer was refused after the relay was taken over: it goes with the attempt
        const relay = call.relay;
        call.relay = null;
        await relay.close('dial attempt failed');
      }
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

interface Attempt {
  dialog: UacDialog;
  /** The answering party's rtpengine leg (SRTP / WebRTC), or null for plain RTP. */
  relay: RelayLeg | null;
}

/**
 * One INVITE, its offer rewritten by rtpengine when the target needs SRTP or the WebRTC profile;
 * `onRequest` sees the request as sent (to cancel it). A rejection throws, and closes the attempt's relay leg.
 */
async function invite(deps: CallDeps, call: CallSession, t: DialTarget, from: string, opts: DialOptions, onRequest?: (req: PendingUac) => void): Promise<Attempt> {
  deps.logger.debug({ call: call.id, uri: t.uri, proxy: t.proxy }, 'INVITE');
  const relay = relayFor(deps, call, t);
  try {
    const localSdp = relay ? await relay.engineOffer(call.endpoint!.local.sdp) : call.endpoint!.local.sdp;
    const dialog = await deps.srf.createUAC(
      t.uri,
      {
        localSdp,
        proxy: t.proxy,
        auth: t.auth,
        headers: { From: from, ...(t.headers ?? {}), ...(opts.headers ?? {}) },
      },
      {
        cbRequest: (_err: unknown, req: SrfSentInvite) => {
          if (!req) return;
          if (onRequest) onRequest(req);
          else call.setPendingUac(req);
          // each attempt's Call-ID: the timeline's SIP ladder finds the captured messages by it
          const sipCallId = req.get('Call-ID');
          if (sipCallId)
            void callSipIdsRepo(deps.db)
              .add(call.id, sipCallId)
              .catch((err: Error) => deps.logger.debug({ err: err.message, call: call.id }, 'Call-ID not recorded'));
        },
        cbProvisional: (res: { status: number }) => {
          if (res.status === 180 || res.status === 183) void call.setStatus('ringing');
        },
      },
    );
    return { dialog, relay };
  } catch (err) {
    await relay?.close('dial attempt failed');
    throw err;
  }
}

/**
 * Rings every target of the step at once (a desk phone and a browser of one extension): the first to
 * answer wins and the others are cancelled (a late 2xx is hung up); when none answers, the failure
 * that says most wins: a decline or busy (6xx, 486) over the rest (RFC 3261 16.7, simplified).
 */
function ringTogether(deps: CallDeps, call: CallSession, step: DialTarget[], fromOf: (t: DialTarget) => string, opts: DialOptions): Promise<Attempt> {
  const pending = new Set<PendingUac>();
  const cancelAll = (): void => {
    for (const r of pending) {
      try {
        r.cancel();
      } catch {
        /* already final */
      }
    }
    pending.clear();
  };
  call.setPendingUac({ cancel: cancelAll });
  return new Promise<Attempt>((resolve, reject) => {
    let winner: Attempt | undefined;
    let failures: unknown[] = [];
    step.forEach((t) => {
      let mine: PendingUac | undefined;
      invite(deps, call, t, fromOf(t), opts, (req) => {
        mine = req;
        if (winner || call.isEnded) {
          try {
            req.cancel();
          } catch {
            /* final */
          }
        } else pending.add(req);
      }).then(
        (attempt) => {
          if (mine) pending.delete(mine);
          if (winner) {
            void attempt.dialog.destroy().catch(() => undefined);
            void attempt.relay?.close('another contact answered');
            return;
          }
          winner = attempt;
          cancelAll();
          resolve(attempt);
        },
        (err: unknown) => {
          if (mine) pending.delete(mine);
          failures.push(err);
          if (!winner && failures.length === step.length) {
            const rank = (e: unknown) => {
              const s = Number((e as { status?: number }).status);
              return s >= 600 ? 3 : s === 486 ? 2 : Number.isFinite(s) ? 1 : 0;
            };
            reject(failures.reduce((a, b) => (rank(b) > rank(a) ? b : a)));
            failures = [];
          }
        },
      );
    });
  });
}
