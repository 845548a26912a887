/**
 * Cisco SPA (SPA3xx/5xx) and MPP 3PCC (CP-68xx/78xx/88xx) XML profile: one `<flat-profile>` whose
 * elements are the parameter names of line 1 (`Proxy_1_` the registration domain, `Outbound_Proxy_1_`
 * where requests go, `Use_Auth_ID_1_` so the digest user is `Auth_ID_1_`).
 */
import { type ProvisioningAccount, type RenderedConfig, hostPort, usesOutboundProxy } from './account';
import { xmlEscape as x } from './xml';

const TRANSPORT = { udp: 'UDP', tcp: 'TCP', tls: 'TLS' } as const;

export function renderCisco(a: ProvisioningAccount): RenderedConfig {
  const proxied = usesOutboundProxy(a);
  const p: [string, string | number][] = [
    ['Line_Enable_1_', 'Yes'],
    ['Display_Name_1_', a.displayName || a.username],
    ['User_ID_1_', a.username],
    ['Use_Auth_ID_1_', 'Yes'],
    ['Auth_ID_1_', a.username],
    ['Password_1_', a.password],
    ['Proxy_1_', proxied ? a.domain : hostPort(a)],
    ['Use_Outbound_Proxy_1_', proxied ? 'Yes' : 'No'],
    ['Outbound_Proxy_1_', proxied ? hostPort(a) : ''],
    ['Register_1_', 'Yes'],
    ['Register_Expires_1_', a.expires],
    ['SIP_Transport_1_', TRANSPORT[a.transport]],
  ];
  const body = ['<?xml version="1.0" encoding="UTF-8"?>', '<flat-profile>', ...p.map(([k, v]) => `  <${k}>${x(String(v))}</${k}>`), '</flat-profile>', ''].join('\n');
  return { contentType: 'application/xml; charset=utf-8', body, filename: 'cisco.xml' };
}
