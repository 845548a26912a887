/**
 * Subscribed MWI (RFC 3842 over the SUBSCRIBE framework, docs/pbx.md "Message waiting"): the
 * message-summary package of the presence subsystem gets voicemail's summary provider, and each MWI
 * notice (core/voicemail/mwi.ts) becomes one presence change notice, which every node's
 * subscriptions hear.
 *
 * What a resource names, in the subscriber's customer:
 *   an extension   its box (the box whose extension_id it is); an extension without a box has no
 *                  counts (`Messages-Waiting: no`)
 *   a box number   that box (a free-standing one, or an extension's box by its number), when no
 *                  extension has that name (the extension wins)
 *
 *   MWI notice (Redis, every node) ──claim (one node)──► notifyChange(extension), notifyChange(box number)
 *                                                          └─► presence changes (Redis, every node) ──► NOTIFY
 */
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { Db } from '../../core/db/knex';
import { extensionsRepo } from '../../core/repos/extensions';
import { voicemailBoxesRepo, type VoicemailBoxRow } from '../../core/voicemail/boxes';
import { mailboxSummary, mwiChannel, parseMwiNotice, type MwiNotice } from '../../core/voicemail/mwi';
import { messageSummaryPackage, type MessageSummaryProvider, type PresenceService } from '../presence';

/** The box a resource name stands for in the customer (see above), or null. */
export async function boxOfResource(db: Db, customerId: string, resource: string): Promise<VoicemailBoxRow | null> {
  const boxes = voicemailBoxesRepo(db);
  const ext = await extensionsRepo(db).getByExtension(customerId, resource);
  if (ext) return boxes.byExtension(customerId, ext.id);
  return boxes.byNumber(customerId, resource);
}

export function mailboxProvider(db: Db): MessageSummaryProvider {
  return {
    async summary(customerId, resource) {
      const box = await boxOfResource(db, customerId, resource);
      if (!box) return null;
      const s = await mailboxSummary(db, box.id);
      return { newMessages: s.newCount, oldMessages: s.oldCount, urgentNew: s.urgentNew, urgentOld: s.urgentOld };
    },
  };
}

/** The names a notice's subscribers may have used: the box's extension and the box number. */
export async function resourcesOf(db: Db, notice: MwiNotice): Promise<string[]> {
  const names = new Set<string>();
  if (notice.extension_id) {
    const ext = await extensionsRepo(db).getOwned(notice.customer_id, notice.extension_id);
    if (ext) names.add(ext.extension);
  }
  const number = await voicemailBoxesRepo(db).numberOf(notice.customer_id, notice.box_id);
  // a box number that is also another extension's name shows that extension's box, not this one
  if (number !== null && (await boxOfResource(db, notice.customer_id, number))?.id === notice.box_id) names.add(number);
  return [...names];
}

export interface MwiPresenceDeps {
  db: Db;
  redis: Redis;
  keyPrefix: string;
  presence: PresenceService;
  logger: Logger;
}

/**
 * Plugs the provider in and bridges the notices. Every node hears every notice; one claims it (a
 * Redis key per notice) and publishes the presence changes, which reach every node's subscriptions
 * once (a NOTIFY per subscription per change, not one per node).
 */
export async function startMwiPresence(d: MwiPresenceDeps): Promise<{ stop(): Promise<void> }> {
  d.presence.addPackage(messageSummaryPackage(mailboxProvider(d.db)));
  const sub = d.redis.duplicate();
  sub.on('error', (err: Error) => d.logger.debug({ err: err.message }, 'mwi presence subscriber'));
  const running = new Set<Promise<unknown>>();
  sub.on('message', (_channel: string, message: string) => {
    const notice = parseMwiNotice(message);
    if (!notice) return;
    const p = (async () => {
      const claim = await d.redis.set(`${d.keyPrefix}mwi-presence-claim:${notice.id}`, '1', 'EX', 60, 'NX');
      if (claim !== 'OK') return;
      for (const name of await resourcesOf(d.db, notice)) await d.presence.notifyChange(notice.customer_id, name, 'message-summary');
    })()
      .catch((err: Error) => d.logger.warn({ err: err.message, box: notice.box_id }, 'MWI change not passed to subscriptions'))
      .finally(() => running.delete(p));
    running.add(p);
  });
  await sub.subscribe(mwiChannel(d.keyPrefix)).catch((err: Error) => d.logger.warn({ err: err.message }, 'no MWI channel: subscribed message-summary NOTIFYs follow refreshes only'));
  return {
    async stop() {
      sub.disconnect();
      await Promise.allSettled([...running]);
    },
  };
}
