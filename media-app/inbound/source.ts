/**
 * Who is calling: a registered extension (digest against its credentials, from its registration
 * domain), a customer's trunk (by source address, or digest at `{domain}.trunk.{SIP_DOMAIN}`), or a
 * provider (by address), or the trunk or provider whose outbound registration's Contact the
 * Request-URI names (media-app/outreg: an unguessable user per registration; the called number is
 * then in the To header). Anything else is refused with 403 and no detail.
 */
import { labelOf } from '../../core/extensions/domain';
import type { ExtensionRow } from '../../core/repos/extensions';
import { trunksRepo, type TrunkRow } from '../../core/repos/trunks';
import { providersRepo, type ProviderRow } from '../../core/repos/providers';
import { outboundRegistrationsRepo, CONTACT_USER_RE } from '../../core/repos/outbound-registrations';
import type { CallDeps } from '../call/deps';
import type { SrfRequest, SrfResponse } from '../srf';
import type { SipUri } from '../sip-uri';

export type CallSource =
  | { kind: 'extension'; customerId: string; ext: ExtensionRow }
  | { kind: 'trunk'; customerId: string; trunk: TrunkRow; registered?: true }
  | { kind: 'provider'; provider: ProviderRow; registered?: true };

/** Resolves the source, or answers the request (challenge or 403) and resolves null. */
export async function identifySource(deps: CallDeps, req: SrfRequest, res: SrfResponse, from: SipUri, ruri: SipUri): Promise<CallSource | null> {
  const sipDomain = deps.config.sipDomain;
  if (CONTACT_USER_RE.test(ruri.user)) {
    const reg = await outboundRegistrationsRepo(deps.db).byContactUser(ruri.user);
    const owner = !reg
      ? null
      : reg.owner_type === 'trunk'
        ? await trunksRepo(deps.db).getOwned(reg.customer_id ?? '', reg.owner_id).then((trunk) => trunk && { kind: 'trunk' as const, customerId: trunk.customer_id, trunk, registered: true as const })
        : await providersRepo(deps.db).get(reg.owner_id).then((provider) => provider && { kind: 'provider' as const, provider, registered: true as const });
    if (!owner) res.send(404);
    return owner;
  }
  if (labelOf(from.host, sipDomain)) {
    const ext = await deps.registrar.authenticate(req, res, from.user, from.host, 'proxy');
    return ext ? { kind: 'extension', customerId: ext.customer_id, ext } : null;
  }
  const trunks = trunksRepo(deps.db);
  const byIp = await trunks.findBySourceIp(req.source_address).catch(() => []);
  if (byIp[0]) return { kind: 'trunk', customerId: byIp[0].customer_id, trunk: byIp[0] };

  const suffix = `.trunk.${sipDomain}`;
  const trunkHost = [ruri.host, from.host].find((h) => h.endsWith(suffix));
  if (trunkHost) {
    const domainName = trunkHost.slice(0, -suffix.length);
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

  const providers = (await deps.db('providers').whereNull('tm_delete')) as ProviderRow[];
  const provider = providers.find((p) => hostOf(p.hostname) === req.source_address);
  if (provider) return { kind: 'provider', provider };
  res.send(403);
  return null;
}

function hostOf(hostname: string): string {
  const h = hostname.trim().toLowerCase();
  const v6 = /^\[([^\]]+)\]/.exec(h);
  if (v6) return v6[1]!;
  return h.split(':')[0]!;
}
