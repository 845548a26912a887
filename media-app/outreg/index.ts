/**
 * Outbound registration: providers and trunks with `registration` settings are registered to their
 * registrar from this node (manager.ts: one node per registration through a Redis lock). The Contact
 * is `sip:<contact user>@<SIP_ADVERTISED_HOST or sip-server's address>:<port>`; an INVITE to that
 * user is the owner's (inbound/source.ts). A trunk's registrar is the customer's input: every address
 * it resolves to is checked by the egress policy before each REGISTER; a provider's is the operator's.
 */
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { Knex } from '../../core/db/knex';
import type { Config } from '../../core/config';
import type { EventPublisher } from '../../core/events/bus';
import type { OutboundRegistrationRow } from '../../core/repos/outbound-registrations';
import { locateSipDestination } from '../../core/calls/sip-destination';
import type { MediaAppConfig } from '../kit/config';
import { sipListeningPoint, type Srf } from '../kit/srf';
import { sipLocateOptions } from '../outbound/sip-egress';
import { OutboundRegistrations } from './manager';

export { OutboundRegistrations } from './manager';

export interface StartOutregOptions {
  srf: Srf;
  db: Knex;
  redis: Redis;
  events: EventPublisher;
  config: Readonly<Config>;
  app: MediaAppConfig;
  logger: Logger;
}

/** Host (brackets kept for IPv6) of "host", "host:port", "[v6]:port". */
export function registrarHost(registrar: string): string {
  const v6 = /^\[[^\]]+\]/.exec(registrar);
  return v6 ? v6[0] : registrar.split(':')[0]!;
}

export function startOutboundRegistrations(o: StartOutregOptions): OutboundRegistrations {
  const target = async (row: OutboundRegistrationRow) => {
    const point = sipListeningPoint(o.srf, row.transport) ?? sipListeningPoint(o.srf, 'udp');
    if (!point) return { refused: 'no SIP listening point for the transport' };
    const tp = row.transport === 'udp' ? '' : `;transport=${row.transport}`;
    const contact = `sip:${row.contact_user}@${o.app.outreg.advertisedHost ?? point.host}:${point.port}${tp}`;
    const domain = row.domain || registrarHost(row.registrar);
    const next = `sip:${row.registrar};transport=${row.transport}`;
    let proxy = next;
    if (row.owner_type === 'trunk') {
      const located = await locateSipDestination(next, sipLocateOptions(o.config));
      if (!located.ok) return { refused: located.reason === 'unresolvable' ? 'registrar not resolvable' : 'registrar address not allowed' };
      proxy = located.hop.uri;
    }
    return { proxy, uri: `sip:${domain}`, aor: `sip:${row.username}@${domain}`, contact };
  };
  const m = new OutboundRegistrations({
    srf: o.srf,
    db: o.db,
    redis: o.redis,
    keyPrefix: o.config.redisKeyPrefix,
    nodeId: o.app.nodeId,
    events: o.events,
    logger: o.logger,
    timing: { retryMinMs: o.app.outreg.retryMinMs, retryMaxMs: o.app.outreg.retryMaxMs, timeoutMs: o.app.outreg.timeoutMs },
    syncMs: o.app.outreg.syncMs,
    target,
  });
  m.start();
  return m;
}
