/**
 * Where provisioned phones send their SIP requests (the QR code's document).
 * - PROVISIONING_SIP_PROXY=host[:port]: that outbound proxy (an SBC, a LAN address).
 * - else PROVISIONING_WILDCARD_DNS=true: no outbound proxy; the phone resolves its registration domain
 *   `{label}.reg.{SIP_DOMAIN}` (needs a wildcard DNS record `*.reg.{SIP_DOMAIN}` at the SIP server).
 * - else SIP_ADVERTISED_HOST set: the SIP server's advertised address with SIP_PORT (SIP_TLS_PORT for tls).
 * - else (the default): the host the phone fetched its document from (the provisioning request's Host
 *   header, control-api/provisioning/request-host.ts) with SIP_PORT: the phone reached that host, so
 *   it registers with defaults (SIP_DOMAIN, `sip.localhost` by default, resolves for no phone).
 * The account's domain stays the registration domain in every case: it names the customer.
 * PROVISIONING_SIP_TRANSPORT=udp|tcp|tls (default udp).
 */
export interface SipTarget {
  /** The outbound proxy; null: none (the phone resolves its domain), or the request's host (proxyFromRequest). */
  proxyHost: string | null;
  /** The outbound proxy is the host of each provisioning request (no SIP_ADVERTISED_HOST, no proxy setting). */
  proxyFromRequest: boolean;
  proxyPort: number;
  transport: 'udp' | 'tcp' | 'tls';
}

export interface SipTargetEnv {
  PROVISIONING_SIP_PROXY?: string;
  PROVISIONING_SIP_TRANSPORT?: string;
  PROVISIONING_WILDCARD_DNS: boolean;
  SIP_ADVERTISED_HOST?: string;
  SIP_PORT?: number;
  SIP_TLS_PORT?: number;
  SIP_DOMAIN: string;
}

const unbracket = (h: string) => h.replace(/^\[|\]$/g, '');

/** The target from validated settings (core/config.ts checks each variable's form). */
export function sipTarget(e: SipTargetEnv): SipTarget {
  const t = (e.PROVISIONING_SIP_TRANSPORT || 'udp').toLowerCase();
  const transport: SipTarget['transport'] = t === 'tcp' || t === 'tls' ? t : 'udp';
  const sipPort = transport === 'tls' ? (e.SIP_TLS_PORT ?? 5061) : (e.SIP_PORT ?? 5060);
  const raw = e.PROVISIONING_SIP_PROXY?.trim();
  if (raw) {
    const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(raw);
    if (m) return { proxyHost: unbracket(m[1]!), proxyFromRequest: false, proxyPort: m[2] ? Number(m[2]) : transport === 'tls' ? 5061 : 5060, transport };
  }
  if (e.PROVISIONING_WILDCARD_DNS) return { proxyHost: null, proxyFromRequest: false, proxyPort: sipPort, transport };
  const advertised = e.SIP_ADVERTISED_HOST?.trim();
  if (advertised) return { proxyHost: unbracket(advertised.toLowerCase()), proxyFromRequest: false, proxyPort: sipPort, transport };
  return { proxyHost: null, proxyFromRequest: true, proxyPort: sipPort, transport };
}
