/**
 * Grandstream XML provisioning (GXP/GRP/DP families): P-values of account 1 inside
 * <gs_provision><config>. P271 active, P270 account name, P47 SIP server, P48 outbound proxy,
 * P35 SIP user id, P36 authenticate id, P34 password, P3 display name, P31 register (1),
 * P32 registration expiry (minutes), P130 transport (0 UDP, 1 TCP, 2 TLS). The `<mac>` element (the
 * phone checks it against its own) when the extension has a bound MAC. BLF keys are the multi-purpose
 * keys MPK 1..7 of the GXP21xx P-value map: MPK n has mode P(322+n) (1: busy lamp field), account
 * P(298+3n) (0: account 1), name P(299+3n) and value P(300+3n); keys past the seventh are not rendered
 * (those phones number further keys on expansion modules differently).
 */
import { type ProvisioningAccount, type RenderedConfig, hostPort, usesOutboundProxy } from './account';
import { xmlEscape as x } from './xml';

const TRANSPORT = { udp: 0, tcp: 1, tls: 2 } as const;
/** The multi-purpose keys this document sets, and the mode value of a busy lamp field. */
export const GRANDSTREAM_MPK_KEYS = 7;
const MPK_BLF = 1;

export function renderGrandstream(a: ProvisioningAccount): RenderedConfig {
  const p: [string, string | number][] = [
    ['P271', 1],
    ['P270', a.displayName || a.username],
    ['P47', a.domain],
    ['P48', usesOutboundProxy(a) ? hostPort(a) : ''],
    ['P35', a.username],
    ['P36', a.username],
    ['P34', a.password],
    ['P3', a.displayName],
    ['P31', 1],
    ['P32', Math.max(1, Math.round(a.expires / 60))],
    ['P130', TRANSPORT[a.transport]],
    ...(a.blfKeys ?? []).slice(0, GRANDSTREAM_MPK_KEYS).flatMap((key, i): [string, string | number][] => [
      [`P${323 + i}`, MPK_BLF],
      [`P${301 + 3 * i}`, 0],
      [`P${302 + 3 * i}`, key],
      [`P${303 + 3 * i}`, key],
    ]),
  ];
  const body = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<gs_provision version="1">',
    ...(a.mac ? [`  <mac>${x(a.mac)}</mac>`] : []),
    '  <config version="1">',
    ...p.map(([k, v]) => `    <${k}>${x(String(v))}</${k}>`),
    '  </config>',
    '</gs_provision>',
    '',
  ].join('\n');
  return { contentType: 'application/xml; charset=utf-8', body, filename: 'cfg.xml' };
}
