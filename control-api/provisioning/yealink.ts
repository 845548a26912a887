/**
 * Yealink auto-provisioning `.cfg` (T4x/T5x firmware 8x): the `#!version:1.0.0.1` header followed by
 * `key = value` lines for account 1, and one line key per BLF key from line key 2 on (line key 1 is
 * the account's line): type 16 (BLF) on line 1, the watched extension as value and label.
 */
import { type ProvisioningAccount, type RenderedConfig, clean, defaultPort, usesOutboundProxy } from './account';

/** Yealink's line key type of a BLF key. */
const BLF_TYPE = 16;

const TRANSPORT = { udp: 0, tcp: 1, tls: 2 } as const;

export function renderYealink(a: ProvisioningAccount): RenderedConfig {
  const kv: [string, string | number][] = [
    ['account.1.enable', 1],
    ['account.1.label', a.displayName || a.username],
    ['account.1.display_name', a.displayName || a.username],
    ['account.1.auth_name', a.username],
    ['account.1.user_name', a.username],
    ['account.1.password', a.password],
    ['account.1.sip_server.1.address', a.domain],
    ['account.1.sip_server.1.port', usesOutboundProxy(a) ? defaultPort(a) : a.proxyPort],
    ['account.1.sip_server.1.transport_type', TRANSPORT[a.transport]],
    ['account.1.sip_server.1.expires', a.expires],
    ['account.1.outbound_proxy_enable', usesOutboundProxy(a) ? 1 : 0],
    ['account.1.outbound_proxy.1.address', a.proxyHost],
    ['account.1.outbound_proxy.1.port', a.proxyPort],
    ...(a.blfKeys ?? []).flatMap((key, i): [string, string | number][] => [
      [`linekey.${i + 2}.type`, BLF_TYPE],
      [`linekey.${i + 2}.line`, 1],
      [`linekey.${i + 2}.value`, key],
      [`linekey.${i + 2}.label`, key],
    ]),
  ];
  const body = ['#!version:1.0.0.1', ...kv.map(([k, v]) => `${k} = ${clean(String(v))}`), ''].join('\n');
  return { contentType: 'text/plain; charset=utf-8', body, filename: 'y000000000000.cfg' };
}
