/**
 * An internal call (outbound/internal.ts: a customer's own +899 number): the outgoing leg is joined
 * to a new incoming leg of this node running the number's flow. Both endpoints come from the one
 * allocation site (endpoint.ts): the callee's is made for the caller, whose call fails without it.
 *
 * As a call through SIP would: the callee's leg is offered (offer.ts), both legs ring, and the callee's
 * flow runs; the callee is answered only when its flow needs the call up, and the caller's leg with it.
 * A refusal before that (TwiML <Reject>: 486, 603; a flow that ends unanswered: 480) is the caller's
 * final response (causeFromSipStatus: busy, no answer); the caller giving up (its hangup, its dial
 * timeout) is the callee's CANCEL.
 */
import type { Address } from '../../core/repos/calls';
import { causeFromSipStatus, type HangupCause } from '../../core/calls/model';
import type { CallEndpoint } from '../media-server/endpoint';
import { dialogPair } from '../outbound/internal';
import type { CallDeps } from './deps';
import { allocateEndpoint } from './endpoint';
import type { IncomingOffer } from './offer';
import type { CallSession } from './session';

/** What the call factory offers an internal call. */
export interface InternalCallHost {
  readonly deps: CallDeps;
  /** A new incoming call of this node that did not come from an INVITE (dialing, owned, announced). */
  incomingLeg(c: { customerId: string; source: Address; destination: Address }, endpoint: CallEndpoint): Promise<CallSession>;
  runFlow(call: CallSession, spec: { flowId: string }): Promise<string>;
}

/** How the callee's offer ended, for the caller: answered (its side of the dialog pair attached) or refused. */
type InternalOutcome = { answered: true } | { answered: false; cause: HangupCause };

/**
 * The callee's offer: its answer makes the dialog pair and attaches the caller's side at once (so the
 * caller hears of the callee's end from then on), the callee's side is its session's; a refusal is the
 * caller's final response. The first of them settles the outcome, once: an answer after a refusal, or
 * when the caller has gone, fails, as a 200 OK after the call ended does.
 */
function internalOffer(call: CallSession, sdp: { caller: string; callee: string }, settle: (o: InternalOutcome) => void): { offer: IncomingOffer; cancel: () => void } {
  let settled = false;
  const once = (o: InternalOutcome): boolean => {
    if (settled) return false;
    settled = true;
    settle(o);
    return true;
  };
  let cancelled = (): void => undefined;
  const offer: IncomingOffer = {
    req: null,
    internal: true,
    async accept() {
      const [out, inc] = dialogPair(sdp.caller, sdp.callee);
      // the caller closing: its session refuses the dialog (its side ends, as a BYE would)
      if (settled || !call.attachDialog(out)) {
        once({ answered: false, cause: 'normal_clearing' });
        throw new Error('the caller of the internal call is gone');
      }
      once({ answered: true });
      return { dialog: inc, ack: null };
    },
    refuse: (status) => void once({ answered: false, cause: causeFromSipStatus(status) }),
    onCancel(fn) {
      cancelled = fn;
    },
  };
  // the caller's CANCEL, through its pending INVITE (dialInternal)
  return { offer, cancel: () => cancelled() };
}

/**
 * Joins the outgoing leg `call` to a new incoming leg running the number's flow; resolves true once the
 * callee's flow answered it (both legs up, progressing), false when it ended unanswered (the caller's
 * leg then closed with the callee's refusal, or its own end). `timeoutMs`: the caller's dial timeout.
 */
export async function dialInternal(host: InternalCallHost, call: CallSession, to: { number: string; flowId: string }, timeoutMs: number): Promise<boolean> {
  const { deps } = host;
  const endpoint = await allocateEndpoint(deps, call);
  if (!endpoint) return false;
  const calleeEndpoint = await allocateEndpoint(deps, call, { remoteSdp: endpoint.local.sdp }, { own: false });
  if (!calleeEndpoint) return false;
  try {
    await endpoint.modify(calleeEndpoint.local.sdp);
  } catch (err) {
    deps.logger.error({ err: (err as Error).message, call: call.id }, 'no media for an internal call');
    await calleeEndpoint.destroy().catch(() => undefined);
    await call.finish('failure');
    return false;
  }
  const callee = await host.incomingLeg({ customerId: call.row.customer_id, source: call.row.source, destination: { type: 'tel', target: to.number } }, calleeEndpoint);
  let settle!: (o: InternalOutcome) => void;
  const outcome = new Promise<InternalOutcome>((r) => (settle = r));
  const { offer, cancel } = internalOffer(call, { caller: endpoint.local.sdp, callee: calleeEndpoint.local.sdp }, settle);
  callee.setOffer(offer);
  // a caller that ended meanwhile cancels at once (setPendingUac)
  call.setPendingUac({ cancel, internal: true });
  // the setup phase's timer, as a dialled call's (dial.ts): the answer clears it
  call.after(timeoutMs, () => void call.terminate('no_answer'));
  await Promise.all([call.setStatus('ringing'), callee.setStatus('ringing')]);
  if (!callee.isEnded) callee.own(host.runFlow(callee, { flowId: to.flowId }), 'the virtual number flow start');
  return callerAnswered(call, await outcome);
}

/** The outcome on the caller's leg: the callee's answer → progressing; else it ends with the cause. */
async function callerAnswered(call: CallSession, o: InternalOutcome): Promise<boolean> {
  if (!o.answered) {
    await call.finish(o.cause);
    return false;
  }
  await call.setStatus('progressing');
  return !call.isEnded;
}
