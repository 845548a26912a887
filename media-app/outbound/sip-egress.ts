/**
 * The egress policy and the RFC 3263 resolver media-app locates customers' SIP destinations with:
 * one EgressPolicy per loaded configuration (EGRESS_ALLOW_CIDRS, EGRESS_DNS_SERVERS), NAPTR/SRV
 * asked of the same DNS servers the policy resolves names with.
 */
import type { Config } from '../../core/config';
import { EgressPolicy } from '../../core/net';
import { systemResolver } from '../../core/sip/locate';
import type { LocateOptions } from '../../core/calls/sip-destination';

const byConfig = new WeakMap<Readonly<Config>, LocateOptions>();

export function sipLocateOptions(config: Readonly<Config>): LocateOptions {
  let o = byConfig.get(config);
  if (!o) {
    o = { egress: new EgressPolicy(config.egress), resolver: systemResolver([...config.egress.dnsServers]) };
    byConfig.set(config, o);
  }
  return o;
}
