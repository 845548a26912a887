/**
 * The PBX of a node (issue 37 part C): the feature-code dispatcher the inbound router asks first,
 * park by REFER to the lot, and the park service.
 */
import { isParkSlot, matchFeatureCode } from '../../core/pbx/feature-codes';
import { NEXT, type ActionContext, type Outcome } from '../flow/actions/base';
import { pbxSettingsRepo } from '../../core/pbx/settings';
import type { Address } from '../../core/repos/calls';
import type { ExtensionRow } from '../../core/repos/extensions';
import type { MediaEncryption } from '../../core/sip/media-encryption';
import type { DtmfMode } from '../../core/calls/dtmf-mode';
import type { AudioCodecName } from '../../core/calls/codecs';
import type { CallFactory } from '../call/factory';
import { CallSession } from '../call/session';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import { parseSipUri } from '../kit/sip-uri';
import { ReferSubscription } from '../transfer/refer-notify';
import { NOTIFY_GRACE_MS } from '../transfer/engine';
import { parseActions } from '../../core/flow';
import { dispatchFeature } from './feature-codes';
import { acceptPbxLeg } from './accept-leg';
import { announceSlot } from './announce';
import type { ParkService } from './park';
import type { SupervisorService } from './supervise';
import type { DequeueLegTaker } from './accept-leg';
import { onceAborted } from '../kit/clock';

/** An extension's INVITE as the router saw it. */
export interface DialledByExtension {
  readonly req: SrfRequest;
  readonly res: SrfResponse;
  readonly ext: ExtensionRow;
  readonly caller: Address;
  readonly dialled: string;
  readonly party: { mediaEncryption: MediaEncryption; dtmfMode: DtmfMode; codecs: AudioCodecName[] };
}

export class PbxService {
  constructor(
    private readonly factory: CallFactory,
    readonly park: ParkService,
    readonly supervisor: SupervisorService,
    /** The node's queue subsystem, when it runs (a dequeue leg's taker). */
    private readonly queues: () => DequeueLegTaker | undefined = () => undefined,
  ) {}

  private get deps() {
    return this.factory.deps;
  }

  /** Runs the feature `dialled` names; false when it names none (the router goes on). */
  async dispatch(d: DialledByExtension): Promise<boolean> {
    const codes = await pbxSettingsRepo(this.deps.db).get(d.ext.customer_id);
    const code = matchFeatureCode(codes, d.dialled);
    if (!code) return false;
    return dispatchFeature(
      {
        req: d.req,
        res: d.res,
        ext: d.ext,
        park: this.park,
        supervisor: this.supervisor,
        codes,
        offer: (destination) => this.factory.inbound(d.req, d.res, { customerId: d.ext.customer_id, source: d.caller, destination, ...d.party }),
        answer: async (destination) => {
          const call = await this.factory.inbound(d.req, d.res, { customerId: d.ext.customer_id, source: d.caller, destination, ...d.party });
          if (!call) return null;
          await call.answer();
          return call;
        },
        runActions: async (call, actions) => {
          await this.factory.runFlow(call, { actions: parseActions(actions) }).catch(async (err: Error) => {
            this.deps.logger.warn({ err: err.message, call: call.id }, 'feature flow did not start');
            await call.hangup('normal');
          });
        },
      },
      code,
    );
  }

  /** A PBX leg from another node (xnode/pbx-leg.ts) for a call this node holds (accept-leg.ts). */
  acceptLeg(req: SrfRequest, res: SrfResponse): Promise<void> {
    return acceptPbxLeg({ deps: this.deps, factory: this.factory, park: this.park, supervisor: this.supervisor, queues: this.queues() }, req, res);
  }

  /**
   * The flow action `park`: the flow's call (answered first) is parked and told its slot; the action
   * lasts while the call does (retrieved, it ends with its retriever). No free slot: next action.
   */
  async parkFromFlow(ctx: ActionContext, slot: number | undefined): Promise<Outcome> {
    if (ctx.referenceType !== 'call' || !ctx.call) return { kind: 'fail', message: 'park needs a call' };
    const call = this.factory.get(ctx.referenceId);
    if (!call || call.isEnded) return { kind: 'end', reason: 'call_hangup' };
    const codes = await pbxSettingsRepo(this.deps.db).get(call.row.customer_id);
    if (slot !== undefined && !isParkSlot(codes, slot)) return { kind: 'fail', message: `park: slot ${slot} is not one of ${codes.park_slot_first}-${codes.park_slot_last}` };
    await ctx.call.prepareMedia(ctx.signal);
    const rec = await this.park.park(call, { parker: null, leaving: null, slot, announce: (s) => announceSlot(call, s) });
    ctx.vars.set('svc.park.slot', rec ? String(rec.slot) : '');
    if (!rec) return NEXT;
    let off: () => void = () => undefined;
    await Promise.race([call.done, new Promise<void>((r) => (off = onceAborted(ctx.signal, r)))]);
    off();
    return { kind: 'end', reason: 'call_hangup' };
  }

  /**
   * A REFER whose Refer-To is the customer's park lot: 202, the transferer's peer parked, the slot
   * told to the transferer (TTS), the final NOTIFY, then the transferer released. False when the
   * target is not the lot (the REFER is a transfer). Every slot taken: NOTIFY 503, the pair stays.
   */
  async parkByRefer(call: CallSession, referTo: string, res: SrfResponse): Promise<boolean> {
    const u = parseSipUri(referTo);
    const domain = this.deps.config.sipDomain.toLowerCase();
    if (!u?.user || (u.host !== domain && !u.host.endsWith(`.${domain}`))) return false;
    const codes = await pbxSettingsRepo(this.deps.db).get(call.row.customer_id);
    if (u.user !== codes.park_lot) return false;
    const peer = call.bridge?.other(call);
    if (!(peer instanceof CallSession) || peer.isEnded || !peer.answered) return (void res.send(403, 'Nothing To Park'), true);
    res.send(202);
    const sub = new ReferSubscription(call, this.deps.logger, `park:${call.id}`);
    sub.report(100, 'Trying');
    const parker = call.row.direction === 'incoming' ? call.row.source : call.row.destination;
    const rec = await this.park.park(peer, { parker, leaving: call }).catch((err: Error) => {
      this.deps.logger.warn({ err: err.message, call: peer.id }, 'park failed');
      return null;
    });
    if (!rec) {
      sub.report(503, 'Service Unavailable');
      return true;
    }
    await announceSlot(call, rec.slot);
    sub.report(200, 'OK');
    await sub.flushed(NOTIFY_GRACE_MS);
    await call.hangup('parked');
    return true;
  }
}
