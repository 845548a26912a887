/**
 * The dialler: an attempt runner over a narrow host it declares itself (DialHost), knowing nothing of
 * the call that hosts it. The INVITE goes to each target in turn (route fallback; the contacts of one
 * extension ring together) until one answers, the far end rejects in a way another route would not
 * change (busy, declined, cancelled), or the host ends (its dial timeout, a hangup). 180/183 tell the
 * host it rings. The outcome says what happened; the call core applies it to the session
 * (media-app/call/dial.ts): the dialler never moves the call's status nor ends it.
 */
import type { Logger } from 'pino';
import { causeFromSipStatus, type HangupCause } from '../../core/calls/model';
import type { DialTarget } from './targets';
import type { SrfDialog } from '../kit/srf';
import type { Knex } from '../../core/db/knex';
import { callSipIdsRepo } from '../../core/repos/call-sip-ids';
import { nameAddr } from '../kit/sip-uri';
import { farProfileFor, NgError, type MediaRelay, type RelayLeg } from '../rtpengine';
import type { AudioCodecName } from '../../core/calls/codecs';
import type { DtmfMode } from '../../core/calls/dtmf-mode';
import { sendInvite } from './uac';
import type { SessionTimerSettings } from '../kit/sip-session-timer';

/** What the dialler needs of its node. */
export interface DialerDeps {
  srf: Parameters<typeof sendInvite>[0];
  db: Knex;
  logger: Logger;
  /** rtpengine, for targets that need SRTP / WebRTC. */
  relay?: MediaRelay;
  /** the node's settings: the session timer our INVITEs offer (RFC 4028) */
  app?: { sessionTimer?: SessionTimerSettings };
}

/** An INVITE in flight (or several, ringing together): cancelled as one. */
export interface PendingInvite {
  cancel(): void;
}

/** What the dialler is told of, and asks of, the call it dials for. */
export interface DialHost {
  /** The call's id (its relay legs and recorded Call-IDs are named by it). */
  readonly id: string;
  /** Ended (hung up, timed out): no further attempt starts, a late answer is hung up. */
  readonly isEnded: boolean;
  /** Our offer: the media endpoint's SDP (a target's relay leg rewrites it for SRTP / WebRTC). */
  readonly localSdp: string;
  /** The INVITE in flight: how the host cancels it when it ends first. */
  onPending(invite: PendingInvite): void;
  /** A 180/183 arrived. */
  onRinging(): void;
  /** An attempt's INVITE went out with this Call-ID, then had this final status (200: answered). */
  onSip?(facts: { callId?: string; status?: number }): void;
  /** The answering party's SDP applied to the host's media, behind the attempt's relay leg; rejects when refused. */
  applyAnswer(sdp: string, relay: RelayLeg | null): Promise<void>;
}

/**
 * The relay leg for a target that needs SRTP / WebRTC, or null; throws without rtpengine. The attempt
 * owns it (closed when the attempt fails); the outcome hands it to the call when that target answers.
 */
function relayFor(deps: DialerDeps, host: DialHost, t: DialTarget): RelayLeg | null {
  const far = farProfileFor(t.mediaEncryption, t.transport);
  if (far === 'plain') return null;
  if (!deps.relay) throw new NgError('offer', 'rtpengine not configured (RTPENGINE_NG)', true);
  return deps.relay.leg(host.id, far);
}

/** Final statuses after which another route is not tried. */
const FINAL = new Set([486, 487, 600, 603, 404, 484]);

export interface DialOptions {
  from: string;
  /** Display name in From. */
  fromName?: string;
  /** The From of one target when it is not `from` (a PSTN target's caller id: DialTarget.callerId). */
  fromFor?: (t: DialTarget) => string | undefined;
  headers?: Record<string, string>;
}

/**
 * Answered: the dialog (up, its answer applied to the media), the answering party's relay leg (the call's
 * from now on) and its dtmf_mode. Not answered: the cause the call ends with (`normal_clearing` when
 * the host ended first).
 */
export type DialOutcome = { answered: true; dialog: SrfDialog; relay: RelayLeg | null; dtmfMode?: DtmfMode } | { answered: false; cause: HangupCause };

/**
 * The codecs of our offer: the targets' list when they share one (one extension's phones, one
 * provider), else none (the engine's default, G.711 first): the offer is made once for every target.
 */
export function offerCodecs(targets: readonly DialTarget[]): AudioCodecName[] | undefined {
  const first = targets[0]?.codecs;
  if (!first) return undefined;
  return targets.every((t) => t.codecs && t.codecs.join() === first.join()) ? first : undefined;
}

export async function dial(deps: DialerDeps, host: DialHost, targets: DialTarget[], opts: DialOptions): Promise<DialOutcome> {
  let cause: HangupCause = 'failure';
  const from = nameAddr(opts.from, opts.fromName);
  const fromOf = (t: DialTarget): string => opts.fromFor?.(t) ?? from;
  for (const step of ringSteps(targets)) {
    if (host.isEnded) return { answered: false, cause: 'normal_clearing' };
    try {
      const { dialog, relay } = step.length === 1 ? await invite(deps, host, step[0]!, fromOf(step[0]!), opts) : await ringTogether(deps, host, step, fromOf, opts);
      if (host.isEnded) {
        // answered after we gave up (CANCEL crossed the 200): hang up at once, without waiting for the
        // BYE's answer (a phone that never answers it would hold the outcome for the BYE's 32 s
        // transaction, and the caller with it)
        void dialog.destroy().catch((err: Error) => deps.logger.debug({ err: err.message, call: host.id }, 'BYE of a late answer failed'));
        await relay?.close('answered after the call ended');
        return { answered: false, cause: 'normal_clearing' };
      }
      if (dialog.remote.sdp) {
        // an answer the media (or rtpengine) refuses: the dialog and the relay leg go, the next target may do better
        await host.applyAnswer(dialog.remote.sdp, relay).catch(async (err: Error) => {
          void dialog.destroy().catch(() => undefined);
          await relay?.close('dial attempt failed');
          throw err;
        });
      }
      host.onSip?.({ status: 200 });
      // the contacts of one step are one extension's: one dtmf_mode
      return { answered: true, dialog, relay, ...(step[0]?.dtmfMode ? { dtmfMode: step[0].dtmfMode } : {}) };
    } catch (err) {
      const status = Number((err as { status?: number }).status);
      cause = Number.isFinite(status) ? causeFromSipStatus(status) : 'failure';
      if (Number.isFinite(status)) host.onSip?.({ status });
      deps.logger.debug({ call: host.id, uris: step.map((t) => t.uri), status, err: (err as Error).message }, 'dial attempt failed');
      if (FINAL.has(status)) break;
    }
  }
  return { answered: false, cause };
}

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
  dialog: SrfDialog;
  /** The answering party's rtpengine leg (SRTP / WebRTC), or null for plain RTP. */
  relay: RelayLeg | null;
}

/**
 * One INVITE (uac.ts), its offer rewritten by rtpengine when the target needs SRTP or the WebRTC profile;
 * `onRequest` sees the request as sent (to cancel it; default: the host's pending INVITE). A rejection
 * throws, and closes the attempt's relay leg.
 */
async function invite(deps: DialerDeps, host: DialHost, t: DialTarget, from: string, opts: DialOptions, onRequest?: (req: PendingInvite) => void): Promise<Attempt> {
  deps.logger.debug({ call: host.id, uri: t.uri, proxy: t.proxy }, 'INVITE');
  const relay = relayFor(deps, host, t);
  try {
    const localSdp = relay ? await relay.engineOffer(host.localSdp) : host.localSdp;
    const dialog = await sendInvite(deps.srf, t, {
      localSdp,
      headers: { From: from, ...(t.headers ?? {}), ...(opts.headers ?? {}) },
      onRequest: (req) => (onRequest ? onRequest(req) : host.onPending(req)),
      sessionTimer: deps.app?.sessionTimer,
      // each attempt's Call-ID: the timeline's SIP ladder finds the captured messages by it
      onCallId: (sipCallId) => {
        host.onSip?.({ callId: sipCallId });
        void callSipIdsRepo(deps.db)
          .add(host.id, sipCallId)
          .catch((err: Error) => deps.logger.debug({ err: err.message, call: host.id }, 'Call-ID not recorded'));
      },
      onProvisional: (status) => {
        if (status === 180 || status === 183) host.onRinging();
      },
    });
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
function ringTogether(deps: DialerDeps, host: DialHost, step: DialTarget[], fromOf: (t: DialTarget) => string, opts: DialOptions): Promise<Attempt> {
  const pending = new Set<PendingInvite>();
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
  host.onPending({ cancel: cancelAll });
  return new Promise<Attempt>((resolve, reject) => {
    let winner: Attempt | undefined;
    let failures: unknown[] = [];
    step.forEach((t) => {
      let mine: PendingInvite | undefined;
      invite(deps, host, t, fromOf(t), opts, (req) => {
        mine = req;
        if (winner || host.isEnded) {
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
