/** What every call needs from its node. */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../../core/config';
import type { EgressPolicy } from '../../core/net';
import type { Knex } from '../../core/db/knex';
import type { EventPublisher } from '../../core/events/bus';
import type { MediaPort } from '../media-server/port';
import type { MediaAppConfig } from '../kit/config';
import type { Registrar } from '../registrar';
import type { MediaRelay } from '../rtpengine';
import type { Srf } from '../kit/srf';
import type { CallRegistry, OwnedCall } from './registry';

export interface CallDeps {
  srf: Srf;
  media: MediaPort;
  db: Knex;
  redis: Redis;
  events: EventPublisher;
  calls: CallRegistry<OwnedCall>;
  config: Readonly<Config>;
  app: MediaAppConfig;
  logger: Logger;
  registrar: Registrar;
  /** Everything fetched or dialled on a customer's behalf (flow HTTP, external media) goes through it. */
  egress: EgressPolicy;
  /** rtpengine, for legs whose SDP needs SRTP or DTLS + ICE (absent: those legs fail, plain ones do not care). */
  relay?: MediaRelay;
}
