/**
 * Keeps every configured outbound registration (providers' and trunks') registered from this
 * media-app node. The settings are read from Postgres every `syncMs`, so an API change is picked up
 * without a message between processes. One node registers each: a Redis lock per registration
 * (`outreg:lock:<id>`, SET NX PX, renewed each sync by its holder), so two nodes never both
 * register; a node that loses its lock stops without unregistering (the new holder keeps the binding).
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Knex } from '../../core/db/knex';
import type { EventPublisher } from '../../core/events/bus';
import { publishResourceEvent } from '../../core/events/catalogue';
import { EMPTY_UUID } from '../../core/ids';
import { outboundRegistrationsRepo, registrationJson, type OutboundRegistrationRow, type RegistrationStatus } from '../../core/repos/outbound-registrations';
import { Registration, type RegistrationDeps, type RegistrationTiming } from './registration';
import type { Srf } from '../kit/srf';

export interface OutregOptions {
  srf: Srf;
  db: Knex;
  redis: Redis;
  keyPrefix: string;
  nodeId: string;
  events: EventPublisher;
  logger: Logger;
  timing: RegistrationTiming;
  syncMs: number;
  target: RegistrationDeps['target'];
}

/** Takes the lock when free, renews it when this node holds it (also after a restart under the same node id). */
const HOLD = `local v = redis.call('get', KEYS[1])
if v == ARGV[1] then redis.call('pexpire', KEYS[1], ARGV[2]) return 1 end
if not v then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/** What, when changed, starts a registration afresh. */
const fingerprint = (r: OutboundRegistrationRow) => JSON.stringify([r.registrar, r.domain, r.username, r.password, r.expires, r.transport, r.contact_user, r.tm_update?.getTime() ?? 0]);

export class OutboundRegistrations {
  private readonly running = new Map<string, { reg: Registration; print: string }>();
  private timer: NodeJS.Timeout | null = null;
  private syncing: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly o: OutregOptions) {}

  start(): void {
    const loop = () => {
      this.syncing = this.sync().catch((err: Error) => this.o.logger.warn({ err: err.message }, 'outbound registration sync failed'));
      void this.syncing.then(() => {
        if (!this.stopped) this.timer = setTimeout(loop, this.o.syncMs);
      });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.syncing;
    await Promise.all([...this.running.keys()].map((id) => this.drop(id, true)));
  }

  private lockKey(id: string): string {
    return `${this.o.keyPrefix}outreg:lock:${id}`;
  }

  private async holdLock(id: string): Promise<boolean> {
    const ttl = String(Math.max(3 * this.o.syncMs, 5000));
    return Number(await this.o.redis.eval(HOLD, 1, this.lockKey(id), this.o.nodeId, ttl)) === 1;
  }

  private async sync(): Promise<void> {
    const rows = await outboundRegistrationsRepo(this.o.db).listLive();
    const seen = new Set<string>();
    for (const row of rows) {
      if (this.stopped) return;
      seen.add(row.id);
      const cur = this.running.get(row.id);
      if (cur && cur.print !== fingerprint(row)) await this.drop(row.id, true, false);
      if (!(await this.holdLock(row.id))) {
        if (this.running.has(row.id)) await this.drop(row.id, false); // another node holds it now
        continue;
      }
      if (!this.running.has(row.id)) this.launch(row);
    }
    for (const id of [...this.running.keys()]) if (!seen.has(id)) await this.drop(id, true);
  }

  private launch(row: OutboundRegistrationRow): void {
    const reg = new Registration(row, {
      srf: this.o.srf,
      timing: this.o.timing,
      target: this.o.target,
      onStatus: (r, st, notable) => this.record(r, st, notable),
      onError: (err) => this.o.logger.warn({ err: err.message, registration: row.id }, 'outbound registration attempt failed'),
    });
    this.running.set(row.id, { reg, print: fingerprint(row) });
    reg.start();
  }

  /** Stops one; `release`: its lock too (false while it is restarted with new settings). */
  private async drop(id: string, unregister: boolean, release = true): Promise<void> {
    const cur = this.running.get(id);
    if (!cur) return;
    this.running.delete(id);
    await cur.reg.stop(unregister);
    if (release && unregister) await this.o.redis.eval(RELEASE, 1, this.lockKey(id), this.o.nodeId).catch(() => undefined);
  }

  /** Writes the state (the row may be gone: then nothing); publishes `<owner>_registration_updated` when notable. */
  private async record(row: OutboundRegistrationRow, st: RegistrationStatus, notable: boolean): Promise<void> {
    const written = await outboundRegistrationsRepo(this.o.db).setStatus(row.id, st, row.tm_update);
    if (!written || !notable) return;
    await publishResourceEvent(this.o.events, row.owner_type === 'trunk' ? 'trunk_registration_updated' : 'provider_registration_updated', {
      id: row.owner_id,
      customer_id: row.customer_id ?? EMPTY_UUID,
      registration: registrationJson(written),
    }).catch((err: Error) => this.o.logger.warn({ err: err.message }, 'registration event not published'));
  }
}
