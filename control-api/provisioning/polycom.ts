/**
 * Polycom/Poly UC Software configuration (VVX, Trio, Edge E): one <polycomConfig> element whose first
 * child's attributes are the reg.1.* parameters of line 1; with BLF keys, an <attendant> element after
 * it: attendant.reg 1 (line 1 subscribes) and attendant.resourceList.N.* (address, label, type normal),
 * one per key in order.
 */
import { type ProvisioningAccount, type RenderedConfig, defaultPort, usesOutboundProxy } from './account';
import { xmlEscape as x } from './xml';

const TRANSPORT = { udp: 'UDPOnly', tcp: 'TCPOnly', tls: 'TLS' } as const;

export function renderPolycom(a: ProvisioningAccount): RenderedConfig {
  const attrs: [string, string | number][] = [
    ['reg.1.address', `${a.username}@${a.domain}`],
    ['reg.1.displayName', a.displayName || a.username],
    ['reg.1.label', a.displayName || a.username],
    ['reg.1.auth.userId', a.username],
    ['reg.1.auth.password', a.password],
    ['reg.1.auth.useLoginCredentials', 0],
    ['reg.1.server.1.address', a.domain],
    ['reg.1.server.1.port', usesOutboundProxy(a) ? defaultPort(a) : a.proxyPort],
    ['reg.1.server.1.transport', TRANSPORT[a.transport]],
    ['reg.1.server.1.expires', a.expires],
    ['reg.1.server.1.register', 1],
    ...(usesOutboundProxy(a)
      ? ([
          ['reg.1.outboundProxy.address', a.proxyHost],
          ['reg.1.outboundProxy.port', a.proxyPort],
          ['reg.1.outboundProxy.transport', TRANSPORT[a.transport]],
        ] as [string, string | number][])
      : []),
  ];
  const keys = a.blfKeys ?? [];
  const attendant: [string, string | number][] = keys.length
    ? [
        ['attendant.reg', 1],
        ...keys.flatMap((key, i): [string, string | number][] => [
          [`attendant.resourceList.${i + 1}.address`, `${key}@${a.domain}`],
          [`attendant.resourceList.${i + 1}.label`, key],
          [`attendant.resourceList.${i + 1}.type`, 'normal'],
        ]),
      ]
    : [];
  const element = (name: string, list: [string, string | number][]) => [`  <${name}`, ...list.map(([k, v]) => `    ${k}="${x(String(v))}"`), '  />'];
  const body = [
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>',
    '<polycomConfig>',
    ...element('reg', attrs),
    ...(attendant.length ? element('attendant', attendant) : []),
    '</polycomConfig>',
    '',
  ].join('\n');
  return { contentType: 'application/xml; charset=utf-8', body, filename: 'phone1.cfg' };
}
