/**
 * Polycom/Poly UC Software configuration (VVX, Trio, Edge E): one <polycomConfig> element whose
 * attributes are the reg.1.* parameters of line 1.
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
  const body = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?>', '<polycomConfig>', '  <reg', ...attrs.map(([k, v]) => `    ${k}="${x(String(v))}"`), '  />', '</polycomConfig>', ''].join(
    '\n',
  );
  return { contentType: 'application/xml; charset=utf-8', body, filename: 'phone1.cfg' };
}
