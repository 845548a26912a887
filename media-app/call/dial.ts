/**
 * The call core's side of dialling: it gives an outgoing CallSession its endpoint (endpoint.ts), arms
 * the dial timeout, runs the dialler (outbound/dialer.ts) over the session as its DialHost, and applies
 * the outcome to the session (relay leg, dtmf_mode, the dialog, progressing; or the call's end with the
 * outcome's cause). outbound/ never drives a session: the direction is call/ → outbound/ only.
 */
import type { CallEndpoint } from '../media-server/endpoint';
import { dial, offerCodecs, type DialHost, type DialOptions, type DialOutcome } from '../outbound/dialer';
import type { DialTarget } from '../outbound/targets';
import type { CallDeps } from './deps';
import { allocateEndpoint } from './endpoint';
import { mediaPath } from './media-path';
import type { CallSession } from './session';

/** The SIP side of a call's last dial attempt: its INVITE's Call-ID and final status (Twilio's DialSip*). */
export interface DialedSip {
  callId: string;
  status: number;
}

const dialed = new WeakMap<CallSession, DialedSip>();

/** What the call's last dial attempt was on the wire, once it went out; undefined for a call never dialled. */
export function dialedSip(call: CallSession): DialedSip | undefined {
  return dialed.get(call);
}

/** The session as the dialler sees it. */
function hostOf(call: CallSession, endpoint: CallEndpoint): DialHost {
  return {
    onSip: (f) => {
      const was = dialed.get(call);
      // a new Call-ID is a new attempt: its status is not known yet
      if (f.callId !== undefined) dialed.set(call, { callId: f.callId, status: 0 });
      else if (was && f.status !== undefined) dialed.set(call, { ...was, status: f.status });
    },
    id: call.id,
    get isEnded() {
      return call.isEnded;
    },
    localSdp: endpoint.local.sdp,
    onPending: (invite) => call.setPendingUac(invite),
    onRinging: () => void call.setStatus('ringing'),
    applyAnswer: (sdp, relay) => mediaPath(endpoint, relay).applyAnswer(sdp),
  };
}

/** The outcome on the session: answered → up (the dialog attached, progressing); else the call ends with the cause. */
async function applyOutcome(call: CallSession, r: DialOutcome): Promise<boolean> {
  if (!r.answered) {
    await call.finish(r.cause);
    return false;
  }
  if (call.isEnded) {
    // ended while the answer was applied: the session refuses the dialog (BYE) and the relay goes
    call.attachDialog(r.dialog);
    await r.relay?.close('answered after the call ended');
    return false;
  }
  // the answering party's relay leg (if any) is the call's from now on: its close cascades
  if (r.relay) call.relay = r.relay;
  if (r.dtmfMode) call.dtmfMode = r.dtmfMode;
  if (!call.attachDialog(r.dialog)) return false;
  await call.setStatus('progressing');
  return !call.isEnded;
}

/**
 * Dials `targets` for an outgoing call; true once answered, false when it ended (the call has been
 * closed with its cause). `near`: the endpoint is made on the worker of this one (a connect leg, bridged to its master).
 */
export async function dialCall(deps: CallDeps, call: CallSession, targets: DialTarget[], opts: DialOptions & { timeoutMs: number; near?: CallEndpoint }): Promise<boolean> {
  if (!targets.length) {
    await call.finish('failure');
    return false;
  }
  const endpoint = await allocateEndpoint(deps, call, { ...(opts.near ? { near: opts.near } : {}), codecs: offerCodecs(targets) });
  if (!endpoint) return false;
  // the setup phase's timer: the answer (the session's move to up) clears it
  call.after(opts.timeoutMs, () => void call.terminate('no_answer'));
  return applyOutcome(call, await dial(deps, hostOf(call, endpoint), targets, opts));
}
