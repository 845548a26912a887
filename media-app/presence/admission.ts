/**
 * Whether a new SUBSCRIBE may become a subscription, in the order a notifier answers (RFC 6665
 * section 4.2.1): first what the request says about itself (an event package we serve: else 489 with
 * Allow-Events; a body type we can send: else 406 with Accept; an Expires we accept: else 400, or
 * 423 with Min-Expires), then who asks (digest like an INVITE from an extension: 407 challenge, 403;
 * a closed account: 403 with its Warning), then what is watched (the Request-URI user: an extension
 * of the subscriber's customer, a resource a feature published or serves (a park slot), or one a
 * package serves; a Request-URI in another customer's registration domain: 403; nothing of that
 * name: 404).
 * Each refusal is answered here and resolves null.
 */
import { labelOf } from '../../core/extensions/domain';
import { extensionsRepo, type ExtensionRow } from '../../core/repos/extensions';
import type { Knex } from '../../core/db/knex';
import type { Registrar } from '../registrar';
import { headerUri } from '../registrar';
import { closedAccount, refuseClosedAccount } from '../registrar/standing';
import { parseSipUri } from '../kit/sip-uri';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import type { EventPackage, Resource } from './package';

export interface AdmissionDeps {
  db: Knex;
  registrar: Registrar;
  /** Whether a feature published or serves the name in the customer (a park slot). */
  featureResource(customerId: string, name: string): Promise<boolean>;
  sipDomain: string;
  minExpires: number;
  maxExpires: number;
  packages: ReadonlyMap<string, EventPackage>;
}

/** The Event header: package name (lower case) and its `id` parameter (RFC 6665 8.2.1). */
export interface EventHeader {
  name: string;
  id?: string;
}

export function parseEvent(value: string | undefined): EventHeader | null {
  if (!value) return null;
  const [name = '', ...params] = value.split(';').map((s) => s.trim());
  if (!/^[a-z0-9!#$%&'*+.^_`|~-]+$/i.test(name)) return null;
  const id = params.map((p) => /^id\s*=\s*(.+)$/i.exec(p)?.[1]).find((v) => v !== undefined);
  return { name: name.toLowerCase(), ...(id ? { id } : {}) };
}

/** The Event header value of our NOTIFYs: the package and the SUBSCRIBE's id. */
export const eventHeader = (e: EventHeader): string => (e.id ? `${e.name};id=${e.id}` : e.name);

/** Whether an Accept header admits `type` (absent: the package's default type, RFC 6665 4.1.2.1). */
export function accepts(accept: string | undefined, type: string): boolean {
  if (accept === undefined) return true;
  const [major] = type.split('/');
  return accept
    .split(',')
    .map((v) => v.split(';')[0]!.trim().toLowerCase())
    .some((v) => v === type || v === '*/*' || v === `${major}/*`);
}

/** The granted duration of a SUBSCRIBE's Expires: a number of seconds, 'brief' (423) or 'bad' (400). */
export function grantExpires(value: string | undefined, min: number, max: number): number | 'brief' | 'bad' {
  if (value === undefined) return max;
  if (!/^\s*\d{1,10}\s*$/.test(value)) return 'bad';
  const n = Number(value);
  if (n === 0) return 0;
  if (n < min) return 'brief';
  return Math.min(n, max);
}

export interface Admitted {
  subscriber: ExtensionRow;
  resource: Resource;
  pkg: EventPackage;
  event: EventHeader;
  expires: number;
}

export async function admit(d: AdmissionDeps, req: SrfRequest, res: SrfResponse): Promise<Admitted | null> {
  const refuse = (status: number, opts?: string | object): null => {
    res.send(status, opts);
    return null;
  };
  const allowEvents = [...d.packages.keys()].join(', ');
  const event = parseEvent(req.get('Event'));
  const pkg = event ? d.packages.get(event.name) : undefined;
  if (!event || !pkg) return refuse(489, { headers: { 'Allow-Events': allowEvents } });
  if (!accepts(req.get('Accept'), pkg.contentType)) return refuse(406, { headers: { Accept: pkg.contentType } });
  const expires = grantExpires(req.get('Expires'), d.minExpires, d.maxExpires);
  if (expires === 'bad') return refuse(400, 'Bad Expires');
  if (expires === 'brief') return refuse(423, { headers: { 'Min-Expires': String(d.minExpires) } });

  const from = parseSipUri(headerUri(req.get('From')));
  const ruri = parseSipUri(req.uri);
  if (!from || !ruri) return refuse(400);
  // only an extension subscribes: it authenticates from its registration domain
  if (!from.user || !labelOf(from.host, d.sipDomain)) return refuse(403);
  const subscriber = await d.registrar.authenticate(req, res, from.user, from.host, 'proxy');
  if (!subscriber) return null;
  const closed = await closedAccount(d.db, subscriber.customer_id);
  if (closed) {
    refuseClosedAccount(res, closed);
    return null;
  }

  const customerId = subscriber.customer_id;
  // another customer's registration domain: never watched from here (its names are not told apart)
  if (labelOf(ruri.host, d.sipDomain) && ruri.host.toLowerCase() !== subscriber.domain_name.toLowerCase()) return refuse(403);
  const name = ruri.user;
  if (!name) return refuse(404);
  const known = (await extensionsRepo(d.db).getByExtension(customerId, name)) !== null || (await d.featureResource(customerId, name)) || (pkg.serves ? await pkg.serves(customerId, name) : false);
  if (!known) return refuse(404);
  return { subscriber, resource: { customerId, name, domain: subscriber.domain_name }, pkg, event, expires };
}
