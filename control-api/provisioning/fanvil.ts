/**
 * Fanvil XML configuration (X-series firmware 2.x): `<sysConf>` with line 1 of `<sip>`. RegisterAddr is
 * the registration domain (Request-URI, To, realm) and ProxyAddr/ProxyPort where the phone sends its
 * requests; Transport 0 UDP, 1 TCP, 3 TLS.
 */
import { type ProvisioningAccount, type RenderedConfig, defaultPort, usesOutboundProxy } from './account';
import { xmlEscape as x } from './xml';

const TRANSPORT = { udp: 0, tcp: 1, tls: 3 } as const;

export function renderFanvil(a: ProvisioningAccount): RenderedConfig {
  const proxied = usesOutboundProxy(a);
  const line: [string, string | number][] = [
    ['PhoneNumber', a.username],
    ['DisplayName', a.displayName || a.username],
    ['RegisterAddr', a.domain],
    ['RegisterPort', proxied ? defaultPort(a) : a.proxyPort],
    ['RegisterUser', a.username],
    ['RegisterPswd', a.password],
    ['RegisterTTL', a.expires],
    ['EnableReg', 1],
    ['ProxyAddr', proxied ? a.proxyHost : ''],
    ['ProxyPort', a.proxyPort],
    ['Transport', TRANSPORT[a.transport]],
  ];
  const body = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<sysConf>',
    '  <Version>2.0000000000</Version>',
    '  <sip>',
    '    <line index="1">',
    ...line.map(([k, v]) => `      <${k}>${x(String(v))}</${k}>`),
    '    </line>',
    '  </sip>',
    '</sysConf>',
    '',
  ].join('\n');
  return { contentType: 'application/xml; charset=utf-8', body, filename: 'fanvil.cfg' };
}
