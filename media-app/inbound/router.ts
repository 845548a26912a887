/**
 * Inbound INVITEs (srf.invite): identify the source, then the destination —
 *   sip:cleg.<conference>@…    a conference's bridge leg from another node (signed; conference/accept-leg.ts)
 *   sip:pleg.<kind>.<call>@…   a PBX leg from another node (signed; pbx/accept-leg.ts)
 *   sip:direct.<hash>@…        the extension with that direct hash (any source)
 *   a number on the platform   its call_flow_id runs as the call's activeflow (a +899 virtual number
 *                              only for its own customer's extensions and trunks)
 *   an extension of the caller's customer (extension and trunk sources): dial its contacts, bridge;
 *                              not answered or busy: its voicemail box when it is set so (extension-voicemail.ts)
 *   a tel number (extension and trunk sources): through the customer's routes, fallback per route
 * Unknown destinations get 404; nothing in the answer tells which part was wrong. A call that
 * arrives through an outbound registration (its Request-URI is our registered Contact) is routed by
 * the To header's user, and a trunk's reaches only its own customer's numbers.
 */
import { numbersRepo } from '../../core/repos/numbers';
import { EMPTY_UUID } from '../../core/ids';
import { extensionsRepo } from '../../core/repos/extensions';
import type { Address } from '../../core/repos/calls';
import type { CallFactory } from '../call/factory';
import type { CallSession } from '../call/session';
import { headerUri } from '../registrar';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import { parseSipUri } from '../kit/sip-uri';
import { identifySource } from './source';
import { isBridgeLeg } from '../conference/accept-leg';
import { isPbxLeg } from '../xnode/pbx-answer';
import { resolveTargets } from '../outbound/targets';
import { isTransientDbError } from '../../core/db/retry';
import { extractContext, withContext } from '../../core/tracing';
import { SIP_TRACE_HEADER } from '../../core/sip/trace-header';
import { isVirtualNumber } from '../../core/numbers/e164';
import type { MediaEncryption } from '../../core/sip/media-encryption';
import { DEFAULT_DTMF_MODE, type DtmfMode } from '../../core/calls/dtmf-mode';
import { extensionVoicemail, toVoicemail, voicemailGreeting } from './extension-voicemail';
import { codecsOf, DEFAULT_EXTENSION_CODECS, DEFAULT_TRUNK_CODECS, type AudioCodecName } from '../../core/calls/codecs';

function displayName(v: string | undefined): string {
  const m = /^\s*"((?:[^"\\]|\\.)*)"/.exec(v ?? '') ?? /^\s*([^<"]+?)\s*</.exec(v ?? '');
  return m ? m[1]!.trim() : '';
}

export class InboundRouter {
  constructor(private readonly factory: CallFactory) {}

  handle = (req: SrfRequest, res: SrfResponse): void => {
    // sip-server's INVITE transaction span (sip-server/drachtio/trace.ts): the call's spans join its trace
    const traceparent = req.get(SIP_TRACE_HEADER);
    withContext(extractContext(traceparent ? { traceparent } : undefined), () => this.route(req, res)).catch((err: Error) => {
      this.factory.deps.logger.error({ err: err.message }, 'inbound INVITE failed');
      // the database is unreachable (restart, fail-over): no call was accepted; the caller or its
      // trunk may try again or fail over (RFC 3261 21.5.4)
      if (!res.finalResponseSent) res.send(isTransientDbError(err) ? 503 : 500, isTransientDbError(err) ? { headers: { 'Retry-After': '5' } } : undefined);
    });
  };

  private async route(req: SrfRequest, res: SrfResponse): Promise<void> {
    const deps = this.factory.deps;
    // a conference's bridge leg from another node: signed, never routed as a call (403 without the conference subsystem)
    if (isBridgeLeg(req)) return this.factory.services.conferences ? this.factory.services.conferences.acceptLeg(req, res) : void res.send(403);
    // a PBX leg from another node (park retrieve, pickup, supervise: signed; pbx/accept-leg.ts)
    if (isPbxLeg(req)) return this.factory.services.pbx ? this.factory.services.pbx.acceptLeg(req, res) : void res.send(403);
    const ruri = parseSipUri(req.uri);
    const fromHeader = req.get('From');
    const from = parseSipUri(headerUri(fromHeader));
    if (!ruri || !from || !ruri.user) return void res.send(ruri && from ? 404 : 400);
    const source = await identifySource(deps, req, res, from, ruri);
    if (!source) return;
    const to = source.kind !== 'extension' && source.registered ? parseSipUri(headerUri(req.get('To'))) : ruri;
    if (!to?.user) return void res.send(404);
    const user = to.user;
    const callerAddr: Address = {
      type: source.kind === 'extension' ? 'extension' : /^\+?\d+$/.test(from.user) ? 'tel' : 'sip',
      target: source.kind === 'extension' ? source.ext.extension : from.user,
      target_name: displayName(fromHeader),
    };
    // what the source's media must be: an offer short of it is refused (488, factory.inbound)
    const mediaEncryption = source.kind === 'extension' ? source.ext.media_encryption : source.kind === 'trunk' ? source.trunk.media_encryption : source.provider.media_encryption;
    // how digits are sent back to the caller (call/dtmf.ts); a provider's calls take the default
    const dtmfMode = source.kind === 'extension' ? source.ext.dtmf_mode : source.kind === 'trunk' ? source.trunk.dtmf_mode : DEFAULT_DTMF_MODE;
    // the codecs the source's calls may use (the caller's order wins in our answer)
    const codecs =
      source.kind === 'extension' ? codecsOf(source.ext.codecs, DEFAULT_EXTENSION_CODECS) : codecsOf(source.kind === 'trunk' ? source.trunk.codecs : source.provider.codecs, DEFAULT_TRUNK_CODECS);
    const party = { mediaEncryption, dtmfMode, codecs };

    // a feature code of the caller's customer (pickup, park, ...: media-app/pbx/) before any lookup
    const pbx = this.factory.services.pbx;
    if (source.kind === 'extension' && pbx && (await pbx.dispatch({ req, res, ext: source.ext, caller: callerAddr, dialled: user, party }))) return;

    if (/^direct\./i.test(user)) {
      const ext = await extensionsRepo(deps.db).getByDirectHash(user.slice('direct.'.length).toLowerCase());
      if (!ext) return void res.send(404);
      return this.bridge(req, res, ext.customer_id, callerAddr, { type: 'extension', target: ext.extension }, party);
    }

    const digits = /^\+?\d{3,20}$/.test(user) ? (user.startsWith('+') ? user : `+${user}`) : null;
    if (digits) {
      // its flow in the same statement: the flow starts without another round trip
      const number = await numbersRepo(deps.db).getByNumberWithFlow(digits);
      // another customer's +899 number is as unknown to an extension or trunk as nobody's (404)
      if (number && isVirtualNumber(digits) && source.kind !== 'provider' && source.customerId !== number.customer_id) return void res.send(404);
      // the carrier behind a trunk's registration delivers that customer's numbers only
      if (number && source.kind === 'trunk' && source.registered && source.customerId !== number.customer_id) return void res.send(404);
      if (number && number.status === 'active' && number.call_flow_id && number.call_flow_id !== EMPTY_UUID) {
        const call = await this.factory.inbound(req, res, {
          customerId: number.customer_id,
          source: callerAddr,
          destination: { type: 'tel', target: digits },
          ...party,
          fromPstn: source.kind === 'provider',
        });
        if (!call) return;
        await this.factory.runFlow(call, { flowId: number.call_flow_id, flow: number.call_flow }).catch(async (err: Error) => {
          deps.logger.warn({ err: err.message, call: call.id }, 'number flow did not start');
          await call.hangup('normal');
        });
        return;
      }
    }
    if (source.kind === 'provider') return void res.send(404);

    const ext = await extensionsRepo(deps.db).getByExtension(source.customerId, user);
    if (ext) return this.bridge(req, res, source.customerId, callerAddr, { type: 'extension', target: ext.extension }, party);
    if (digits) return this.bridge(req, res, source.customerId, callerAddr, { type: 'tel', target: digits }, party);
    res.send(404);
  }

  /** An incoming call connected to one destination; it ends when the bridge ends. */
  private async bridge(
    req: SrfRequest,
    res: SrfResponse,
    customerId: string,
    source: Address,
    destination: Address,
    party: { mediaEncryption: MediaEncryption; dtmfMode: DtmfMode; codecs: AudioCodecName[] },
  ): Promise<void> {
    // nothing to dial (no route, extension not registered, refused by the dial policy): refuse
    // before any call exists; no balance is 402 Payment Required, a caller id the customer may not
    // present to the PSTN (an extension's or a trunk's From, no default number) 403
    const deps = this.factory.deps;
    const vm = destination.type === 'extension' ? await extensionVoicemail(deps.db, customerId, destination.target) : null;
    const planned = await resolveTargets(deps, customerId, destination, { source });
    if ('refusal' in planned && planned.refusal.reason === 'insufficient_balance') return void res.send(402);
    if ('refusal' in planned && planned.refusal.reason === 'source_not_allowed') return void res.send(403);
    if (!('targets' in planned) || !planned.targets.length) {
      // no phone registered: the extension's box takes the call when it is set for no answer
      if (vm?.noAnswer) {
        const call = await this.factory.inbound(req, res, { customerId, source, destination, ...party });
        if (call) await toVoicemail(this.factory, call, vm, 'unavailable');
        return;
      }
      return void res.send(destination.type === 'extension' ? 480 : 404);
    }
    const call: CallSession | null = await this.factory.inbound(req, res, { customerId, source, destination, ...party });
    if (!call) return;
    const abort = new AbortController();
    call.once('hangup', () => abort.abort());
    // the extension's no-answer time: the ringing legs are cancelled and the box takes the call; an
    // answer at the same moment is decided against it once (call/connect.ts RingOutcome)
    let failed: string | null = null;
    try {
      const r = await this.factory.connect(
        call,
        { destinations: [destination], early_media: false, relay_reason: true, anonymous: 'no' },
        abort.signal,
        vm?.noAnswer ? { noAnswerMs: vm.timeoutMs } : {},
      );
      if (!r.answered && !call.isEnded && !call.answered) failed = r.hangup_reason;
    } catch (err) {
      if (!call.isEnded) deps.logger.warn({ err: (err as Error).message, call: call.id }, 'connect failed');
    }
    if (failed !== null && !call.isEnded && !call.answered) {
      const greeting = vm && voicemailGreeting(vm, failed);
      if (vm && greeting) return toVoicemail(this.factory, call, vm, greeting);
      // relay the failure to the caller as a final response
      await call.rejectWith(failed === 'busy' ? 486 : failed === 'noanswer' ? 480 : 404);
      return;
    }
    // the callee's phone died (no media, its session timer ran out): the caller's BYE says so (the
    // bridge told the call: call/close-reason.ts)
    await call.hangup('normal');
  }
}
