/**
 * Who is calling: a registered extension (digest against its credentials, from its registration
 * domain), a customer's trunk, or a provider (by address). Anything else is refused with 403 and no
 * detail.
 *
 * A trunk's `allowed_ips` is customer input, so an address does not belong to a customer just because
 * a trunk names it: two customers may claim one address. A request to `{domain}.trunk.{SIP_DOMAIN}`
 * names its trunk, which accepts it by source address (auth type ip, the address in that trunk's
 * ranges) or by digest (basic). A request that names no trunk domain is taken by address only when
 * the address is unambiguous: every trunk claiming it is one customer's, or the dialled number belongs
 * to exactly one of the claimants. Otherwise 403: another customer's claim can never carry a call.
 *
 * The trunk or provider whose outbound registration's Contact the Request-URI names comes first
 * (media-app/outreg: an unguessable user per registration; the called number is then in the To header).
 */
import { labelOf } from '../../core/extensions/domain';
import type { ExtensionRow } from '../../core/repos/extensions';
import { trunksRepo, type TrunkRow, type TrunkWithStanding } from '../../core/repos/trunks';
import { providersRepo, type ProviderRow } from '../../core/repos/providers';
import { numbersRepo } from '../../core/repos/numbers';
import { outboundRegistrationsRepo, CONTACT_USER_RE } from '../../core/repos/outbound-registrations';
import { closedAccount, refuseClosedAccount, standingOf } from '../registrar/standing';
import type { ClosedStatus } from '../../core/repos/customers';
import type { CallDeps } from '../call/deps';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import type { SipUri } from '../kit/sip-uri';
import { liveProviders } from '../../core/repos/providers';

export type CallSource =
  | { kind: 'extension'; customerId: string; ext: ExtensionRow }
  | { kind: 'trunk'; customerId: string; trunk: TrunkRow; registered?: true; /** its account's standing, read with it (by address) */ standing?: ClosedStatus | null }
  | { kind: 'provider'; provider: ProviderRow; registered?: true };

/**
 * Resolves the source, or answers the request (challenge or 403) and resolves null. A source of a
 * frozen, expired or deleted account gets 403 with a Warning once it is identified
 * (registrar/standing.ts).
 */
export async function identifySource(deps: CallDeps, req: SrfRequest, res: SrfResponse, from: SipUri, ruri: SipUri): Promise<CallSource | null> {
  const source = await resolveSource(deps, req, res, from, ruri);
  const customerId = source && 'customerId' in source ? source.customerId : null;
  if (!source || !customerId) return source;
  const closed = source.kind === 'trunk' && source.standing !== undefined ? source.standing : await closedAccount(deps.db, customerId);
  if (!closed) return source;
  deps.logger.info({ source: source.kind, customer_id: customerId, account: closed }, 'INVITE refused: account closed');
  refuseClosedAccount(res, closed);
  return null;
}

async function resolveSource(deps: CallDeps, req: SrfRequest, res: SrfResponse, from: SipUri, ruri: SipUri): Promise<CallSource | null> {
  const sipDomain = deps.config.sipDomain;
  if (CONTACT_USER_RE.test(ruri.user)) {
    const reg = await outboundRegistrationsRepo(deps.db).byContactUser(ruri.user);
    const owner = !reg
      ? null
      : reg.owner_type === 'trunk'
        ? await trunksRepo(deps.db)
            .getOwned(reg.customer_id ?? '', reg.owner_id)
            .then((trunk) => trunk && { kind: 'trunk' as const, customerId: trunk.customer_id, trunk, registered: true as const })
        : await providersRepo(deps.db)
            .get(reg.owner_id)
            .then((provider) => provider && { kind: 'provider' as const, provider, registered: true as const });
    if (!owner) res.send(404);
    return owner;
  }
  if (labelOf(from.host, sipDomain)) {
    const ext = await deps.registrar.authenticate(req, res, from.user, from.host, 'proxy');
    return ext ? { kind: 'extension', customerId: ext.customer_id, ext } : null;
  }
  const trunks = trunksRepo(deps.db);
  // each trunk with its account's standing, in one statement
  const byIp = await trunks.findBySourceIpWithStanding(req.source_address).catch(() => []);
  const byAddress = ({ trunk, customerStatus }: TrunkWithStanding): CallSource => ({ kind: 'trunk', customerId: trunk.customer_id, trunk, standing: standingOf(customerStatus) });
  const suffix = `.trunk.${sipDomain}`;
  const trunkHost = [ruri.host, from.host].find((h) => h.endsWith(suffix));
  if (trunkHost) {
    const domainName = trunkHost.slice(0, -suffix.length);
    const named = byIp.find((x) => x.trunk.domain_name === domainName);
    if (named) return byAddress(named);
    const trunk = await deps.registrar.authenticateWith(
      req,
      res,
      from.user,
      trunkHost,
      'proxy',
      async () => {
        const t = await trunks.getByDomain(domainName);
        return t && t.auth_types.includes('basic') ? t : null;
      },
      (t) => t.username,
    );
    return trunk ? { kind: 'trunk', customerId: trunk.customer_id, trunk } : null;
  }

  if (byIp.length) {
    const claim = await unambiguous(deps, byIp, ruri.user);
    if (claim) return byAddress(claim);
    deps.logger.info({ source: req.source_address }, 'trunks of several customers claim this address: refused (dial the trunk domain)');
    res.send(403);
    return null;
  }

  const providers = await liveProviders(deps.db);
  const provider = providers.find((p) => hostOf(p.hostname) === req.source_address);
  if (provider) return { kind: 'provider', provider };
  res.send(403);
  return null;
}

/** The trunk an address-only request belongs to (most specific range first), or null when claimants disagree. */
async function unambiguous(deps: CallDeps, byIp: TrunkWithStanding[], dialled: string): Promise<TrunkWithStanding | null> {
  if (byIp.every((x) => x.trunk.customer_id === byIp[0]!.trunk.customer_id)) return byIp[0]!;
  const digits = /^\+?\d{3,20}$/.test(dialled) ? (dialled.startsWith('+') ? dialled : `+${dialled}`) : null;
  const owner = digits ? (await numbersRepo(deps.db).getByNumber(digits))?.customer_id : undefined;
  return (owner && byIp.find((x) => x.trunk.customer_id === owner)) || null;
}

function hostOf(hostname: string): string {
  const h = hostname.trim().toLowerCase();
  const v6 = /^\[([^\]]+)\]/.exec(h);
  if (v6) return v6[1]!;
  return h.split(':')[0]!;
}
