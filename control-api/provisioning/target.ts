/**
 * Where provisioned phones send their REGISTERs. By default the extension's own domain
 * (`{label}.reg.{SIP_DOMAIN}`, which needs a wildcard DNS record pointing at the SIP server); set
 * PROVISIONING_SIP_PROXY=host[:port] to make phones use an outbound proxy address instead (a LAN
 * install without DNS), and PROVISIONING_SIP_TRANSPORT=udp|tcp|tls (default udp).
 */
import type { ExtensionRow } from '../../core/repos/extensions';
import type { ProvisioningAccount } from './account';

export interface SipTarget {
  proxyHost: string | null;
  proxyPort: number;
  transport: 'udp' | 'tcp' | 'tls';
}

export function sipTargetFromEnv(env: NodeJS.ProcessEnv = process.env): SipTarget {
  const transport = (env.PROVISIONING_SIP_TRANSPORT || 'udp').toLowerCase();
  if (transport !== 'udp' && transport !== 'tcp' && transport !== 'tls') throw new Error('PROVISIONING_SIP_TRANSPORT must be udp, tcp or tls');
  const dflt = transport === 'tls' ? 5061 : 5060;
  const raw = env.PROVISIONING_SIP_PROXY?.trim();
  if (!raw) return { proxyHost: null, proxyPort: dflt, transport };
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(raw);
  if (!m) throw new Error('PROVISIONING_SIP_PROXY must be host or host:port');
  return { proxyHost: m[1].replace(/^\[|\]$/g, ''), proxyPort: m[2] ? Number(m[2]) : dflt, transport };
}

export function accountFor(ext: ExtensionRow, target: SipTarget = sipTargetFromEnv()): ProvisioningAccount {
  return {
    username: ext.username,
    password: ext.password,
    domain: ext.domain_name,
    displayName: ext.name,
    proxyHost: target.proxyHost ?? ext.domain_name,
    proxyPort: target.proxyPort,
    transport: target.transport,
    expires: 3600,
  };
}
