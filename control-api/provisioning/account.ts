/** What every phone-family renderer needs to know about the SIP account it configures. */
export interface ProvisioningAccount {
  /** SIP user part (the extension's `username`). */
  username: string;
  /** Digest password in clear: the provisioning URL is a credential for exactly this reason. */
  password: string;
  /** Registration domain and digest realm: the extension's `domain_name`. */
  domain: string;
  /** Name shown on the phone. */
  displayName: string;
  /** Where the phone sends its requests (an outbound proxy); the domain itself when it resolves to the SIP server (wildcard DNS). */
  proxyHost: string;
  proxyPort: number;
  transport: 'udp' | 'tcp' | 'tls';
  /** Registration interval asked for, seconds. */
  expires: number;
  /** The MAC bound to the extension (12 lowercase hex digits), null when none: Grandstream names it. */
  mac: string | null;
  /** The extensions on the phone's busy lamp keys, in key order (the extension's blf_keys; absent: none). */
  blfKeys?: readonly string[];
}

/** The SIP URI a BLF key watches: the extension in the account's registration domain. */
export const blfUri = (a: ProvisioningAccount, key: string): string => `sip:${key}@${a.domain}`;

export interface RenderedConfig {
  contentType: string;
  body: string;
  /** Suggested file name (Content-Disposition), some phones log it. */
  filename: string;
}

/** `host` or `host:port` for a SIP URI, leaving out the default port of the transport. */
export function hostPort(a: ProvisioningAccount): string {
  const dflt = defaultPort(a);
  const host = a.proxyHost.includes(':') && !a.proxyHost.startsWith('[') ? `[${a.proxyHost}]` : a.proxyHost;
  return a.proxyPort === dflt ? host : `${host}:${a.proxyPort}`;
}

/** Does the phone send to an outbound proxy (rather than to its domain)? Its R-URI/To domain stays `domain`. */
export function usesOutboundProxy(a: ProvisioningAccount): boolean {
  return a.proxyHost.toLowerCase() !== a.domain.toLowerCase();
}

/** The transport's default port (the registration domain's port in the R-URI when a proxy carries the traffic). */
export const defaultPort = (a: ProvisioningAccount): number => (a.transport === 'tls' ? 5061 : 5060);

/** No control characters in values written into line-based or XML formats. */
export function clean(value: string): string {
  return value.replace(/[\u0000-\u001f\u007f]/g, ''); // eslint-disable-line no-control-regex -- matches control characters on purpose, to remove them
}
