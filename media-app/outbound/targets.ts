/**
 * Where an outgoing call's destination is sent, once the dial policy (core/calls/dial-policy) allows it:
 * - a PSTN number through the customer's routes (providers in order, each a fallback for the one
 *   before), when the toll-fraud checks pass, the balance pays the first minute and the concurrency
 *   cap admits the call;
 * - a +899 virtual number never leaves the platform (own numbers: outbound/internal.ts); a number the
 *   customer does not own is number_not_found;
 * - a SIP URI to the address it was located at and the egress policy checked (core/calls/sip-destination);
 * - an extension to each of its registered contacts (through the address the REGISTER came from: NAT);
 * - an agent to its addresses.
 * Every originate, flow `connect`/`call` leg, groupcall leg, queue ring, transfer and REFER target and
 * SIP extension-to-tel call dials through here. A provider target carries the caller id the PSTN sees
 * (`callerId`): the leg's source held to core/calls/caller-id; a source the rule refuses refuses the
 * number (source_not_allowed), so nothing is sent with it.
 */
import type { Knex } from '../../core/db/knex';
import type { MediaEncryption } from '../../core/sip/media-encryption';
import type { DtmfMode } from '../../core/calls/dtmf-mode';
import type { Config } from '../../core/config';
import type { Address } from '../../core/repos/calls';
import { extensionsRepo } from '../../core/repos/extensions';
import { agentsRepo } from '../../core/repos/agents';
import { isUuid } from '../../core/ids';
import { isVirtualNumber } from '../../core/numbers/e164';
import { forcedProvider, providerRequestUri, resolveRoutes } from '../../core/routing/resolve';
import type { BindingStore } from '../registrar/bindings';
import { admitPstnCalls, balanceRefusal, checkTelDestination, isPstnTarget, livePstnCalls, maxConcurrentPstn, noteRefusal, ownVirtualNumber, type DialRefusal } from '../../core/calls/dial-policy';
import { locateSipDestination } from '../../core/calls/sip-destination';
import { pstnCallerId } from '../../core/calls/caller-id';
import { sipLocateOptions } from './sip-egress';
import { parseSipUri } from '../kit/sip-uri';
import { codecsOf, DEFAULT_EXTENSION_CODECS, DEFAULT_TRUNK_CODECS, type AudioCodecName } from '../../core/calls/codecs';

export interface DialTarget {
  uri: string;
  /** Next hop when it differs from the Request-URI host. */
  proxy?: string;
  auth?: { username: string; password: string };
  providerId?: string;
  headers?: Record<string, string>;
  /**
   * A registered contact: the transport its REGISTER came on (udp, tcp, tls, ws, wss). ws/wss is a
   * browser (SIP over WebSocket): its media needs the WebRTC profile (DTLS-SRTP, ICE, rtcp-mux).
   */
  transport?: string;
  /** Targets with the same ring group (an extension's contacts: its address of record) ring together, not in turn. */
  ringGroup?: string;
  /** The party's media_encryption (a provider's, an extension's): sdes or dtls make our offer go through rtpengine. */
  mediaEncryption?: MediaEncryption;
  /** How digits are sent to the party (an extension's dtmf_mode; default rfc4733). */
  dtmfMode?: DtmfMode;
  /** The party's codecs in offer order (an extension's, a provider's: core/calls/codecs). */
  codecs?: AudioCodecName[];
  /** A provider (PSTN) target: the source its From presents, as the caller-id rule allowed or replaced it. */
  callerId?: { source: Address; replaced: boolean };
}

/** What a destination is resolved for: the row being dialled and the source it would present. */
export interface ResolveOptions {
  /** The outgoing row about to be dialled (refusals are noted on it; the concurrency cap admits it). */
  callId?: string;
  /** The leg's source: a PSTN target goes out with it only if core/calls/caller-id allows it. */
  source?: Address;
  /** The caller number of the inbound PSTN call the leg forwards (caller-id rule 2). */
  inboundCaller?: Address | null;
}

/** What resolving a destination needs from the node (CallDeps has it all). */
export interface TargetDeps {
  db: Knex;
  registrar: { bindings: BindingStore };
  config: Readonly<Config>;
}

/**
 * `callId`: the outgoing row about to be dialled. A refusal gives no target (nothing is dialled) and
 * is noted on the row (data.dial_refused: the reason). Without a callId (a pre-check) a customer at
 * its cap gets no target either.
 */
export async function targetsFor(deps: TargetDeps, customerId: string, dest: Address, opts: ResolveOptions = {}): Promise<DialTarget[]> {
  const r = await resolveTargets(deps, customerId, dest, opts);
  if ('refusal' in r) {
    if (opts.callId) await noteRefusal(deps.db, opts.callId, r.refusal);
    return [];
  }
  return r.targets;
}

export type Resolved = { targets: DialTarget[] } | { refusal: DialRefusal };

/** The targets, or why the dial policy refuses the destination (nothing noted anywhere). */
export async function resolveTargets(deps: TargetDeps, customerId: string, dest: Address, opts: ResolveOptions): Promise<Resolved> {
  const target = (dest.target ?? '').trim();
  switch (dest.type) {
    case 'tel':
      return telTargets(deps.db, customerId, dest, target, opts);
    case 'sip':
      return sipTargets(deps.config, target);
    case 'extension':
      return extensionTargets(deps, customerId, target);
    case 'agent':
      return agentTargets(deps, customerId, target, opts);
    default:
      return { targets: [] };
  }
}

/** A number: an own virtual number (joined internally, never dialled), else the routes' providers once the dial policy allows it. */
async function telTargets(db: Knex, customerId: string, dest: Address, target: string, opts: ResolveOptions): Promise<Resolved> {
  if (isVirtualNumber(target)) {
    if (!(await ownVirtualNumber(db, customerId, target))) return { refusal: { reason: 'number_not_found' } };
    // never through a provider: an own number with a flow is joined internally
    // (outbound/internal.ts, before any target is asked for); nothing to dial otherwise
    return { targets: [] };
  }
  const refusal = (await checkTelDestination(db, customerId, target)) ?? (await balanceRefusal(db, customerId, dest));
  if (refusal) return { refusal };
  // an operator's call through one provider (POST /providercalls) skips the routes
  const forced = opts.callId ? await forcedProvider(db, opts.callId) : null;
  const routes = forced ? [{ provider: forced }] : await resolveRoutes(db, customerId, target);
  let callerId: DialTarget['callerId'];
  if (routes.length && isPstnTarget(target)) {
    const pstn = await pstnPolicy(db, customerId, opts);
    if ('refusal' in pstn) return pstn;
    callerId = pstn.callerId;
  }
  return {
    targets: routes.map(({ provider }) => ({
      uri: providerRequestUri(provider, target),
      providerId: provider.id,
      auth: provider.auth_username ? { username: provider.auth_username, password: provider.auth_password } : undefined,
      headers: provider.tech_headers && typeof provider.tech_headers === 'object' ? (provider.tech_headers as Record<string, string>) : undefined,
      mediaEncryption: provider.media_encryption,
      codecs: codecsOf(provider.codecs, DEFAULT_TRUNK_CODECS),
      callerId,
    })),
  };
}

/** A PSTN leg's two checks: the caller id it may show (core/calls/caller-id), then the customer's concurrency cap. */
async function pstnPolicy(db: Knex, customerId: string, opts: ResolveOptions): Promise<{ callerId: DialTarget['callerId'] } | { refusal: DialRefusal }> {
  const cid = await pstnCallerId(db, customerId, opts.source, { inboundCaller: opts.inboundCaller });
  if (!cid.ok) return { refusal: { reason: 'source_not_allowed', message: `source: ${cid.issue}` } };
  const capped = opts.callId
    ? await admitPstnCalls(db, customerId, [opts.callId])
    : (await livePstnCalls(db, customerId)) >= (await maxConcurrentPstn(db, customerId))
      ? ({ reason: 'concurrency_cap' } as const)
      : null;
  if (capped) return { refusal: capped };
  return { callerId: { source: cid.source, replaced: cid.replaced } };
}

/** A SIP URI: sent where the egress policy locates it. */
async function sipTargets(config: Readonly<Config>, target: string): Promise<Resolved> {
  if (!target) return { targets: [] };
  const uri = /^sips?:/i.test(target) ? target : `sip:${target}`;
  const located = await locateSipDestination(uri, sipLocateOptions(config));
  if (!located.ok) return { refusal: { reason: 'destination_not_allowed', message: located.message } };
  return { targets: [{ uri, proxy: located.hop.uri }] };
}

/** An extension: each contact it has registered. */
async function extensionTargets(deps: TargetDeps, customerId: string, target: string): Promise<Resolved> {
  const ext = await extensionsRepo(deps.db).getByExtension(customerId, target);
  if (!ext) return { targets: [] };
  const live = await deps.registrar.bindings.get(`${ext.username}@${ext.domain_name}`);
  // through an edge (Path) or not, the contact keeps the transport it registered on (a browser's
  // ws/wss: the WebRTC profile), its extension's ring group and media encryption
  return {
    targets: live.map((b) => ({
      ...(b.path?.length
        ? viaPath(b.contact, b.path)
        : {
            uri: b.contact,
            proxy: `sip:${b.source.address}:${b.source.port}${b.source.protocol && b.source.protocol !== 'udp' ? `;transport=${b.source.protocol}` : ''}`,
          }),
      transport: b.source.protocol || 'udp',
      ringGroup: `${ext.username}@${ext.domain_name}`.toLowerCase(),
      mediaEncryption: ext.media_encryption,
      dtmfMode: ext.dtmf_mode,
      codecs: codecsOf(ext.codecs, DEFAULT_EXTENSION_CODECS),
    })),
  };
}

/**
 * An agent is reached at its addresses, tried in the order the agent listed them (an agent address
 * naming another agent is skipped: no loops); a refused address is skipped.
 */
async function agentTargets(deps: TargetDeps, customerId: string, target: string, opts: ResolveOptions): Promise<Resolved> {
  const agent = isUuid(target) ? await agentsRepo(deps.db).get(target.toLowerCase(), { customerId }) : null;
  if (!agent) return { targets: [] };
  const out: DialTarget[] = [];
  for (const a of agent.addresses) {
    if (a.type !== 'agent') out.push(...(await targetsFor(deps, customerId, a as Address, opts)));
  }
  return { targets: out };
}

/** A contact registered through an edge (RFC 3327 Path): sent to the first Path hop, with the whole Path as Route. */
function viaPath(contact: string, path: string[]): DialTarget {
  const hop = parseSipUri(path[0]!);
  const transport = /;transport=(\w+)/i.exec(path[0]!)?.[1];
  const proxy = hop && `sip:${hop.host}${hop.port ? `:${hop.port}` : ''}${transport ? `;transport=${transport.toLowerCase()}` : ''}`;
  return { uri: contact, proxy: proxy || undefined, headers: { Route: path.map((p) => `<${p}>`).join(', ') } };
}
