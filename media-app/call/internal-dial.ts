/**
 * An internal call (outbound/internal.ts: a customer's own +899 number): the outgoing leg is joined
 * to a new incoming leg of this node running the number's flow. Both endpoints come from the one
 * allocation site (endpoint.ts): the callee's is made for the caller, whose call fails without it.
 */
import type { Address } from '../../core/repos/calls';
import type { Endpoint } from '../../media-engine';
import { dialogPair } from '../outbound/internal';
import type { CallDeps } from './deps';
import { allocateEndpoint } from './endpoint';
import type { CallSession } from './session';

/** What the call factory offers an internal call. */
export interface InternalCallHost {
  readonly deps: CallDeps;
  /** A new incoming call of this node that did not come from an INVITE (dialing, owned, announced). */
  incomingLeg(c: { customerId: string; source: Address; destination: Address }, endpoint: Endpoint): Promise<CallSession>;
  runFlow(call: CallSession, spec: { flowId: string }): Promise<string>;
}

/** Joins the outgoing leg `call` to a new incoming leg running the number's flow; false when it could not be made. */
export async function dialInternal(host: InternalCallHost, call: CallSession, to: { number: string; flowId: string }): Promise<boolean> {
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
  await Promise.all([call.setStatus('ringing'), callee.setStatus('ringing')]);
  const [out, inc] = dialogPair(endpoint.local.sdp, calleeEndpoint.local.sdp);
  // either leg closed while the statuses were written: the other sees the far end hang up
  if (!callee.attachDialog(inc)) {
    await call.finish('normal_clearing');
    return false;
  }
  if (!call.attachDialog(out)) return false;
  await Promise.all([callee.setStatus('progressing'), call.setStatus('progressing')]);
  callee.own(host.runFlow(callee, { flowId: to.flowId }), 'the virtual number flow start');
  return true;
}
