/**
 * The busy-lamp feed of the WebSocket (our extension, docs/pbx.md "Console"): every copy of
 * control-api listens to the presence change channel (core/presence/store.ts, the one every
 * media-app node publishes on) and, for a change of a resource of a customer that has sockets here,
 * reads its state (control-api/pbx/extension-states.ts) and sends it to the sockets subscribed to
 * its topic:
 *   an extension   `extension_state_updated`, topic resource `extension`, id the extension's;
 *   a park slot    `parkslot_state_updated`, topic resource `parkslot`, id the slot's number
 *                  (the slot's state is published apart from the call_parked / call_unparked
 *                  events and may land after them: this frame is the slot's lamp itself).
 * A frame of the socket only: not stored, not a webhook (the state is in Redis, and
 * GET /v1.0/extension_states reads it whole). Changes of one resource are read in their order.
 */
import type { Redis } from 'ioredis';
import type { AppContext } from '../context';
import type { Hub } from './hub';
import { PresenceStore, type PresenceChange } from '../../core/presence/store';
import type { PlatformEvent } from '../../core/events/bus';
import { newId } from '../../core/ids';
import { extensionStates } from '../pbx/extension-states';

export const EXTENSION_STATE_EVENT = 'extension_state_updated';
export const SLOT_STATE_EVENT = 'parkslot_state_updated';

export async function startPresenceFeed(ctx: AppContext, hub: Hub): Promise<() => Promise<void>> {
  const store = new PresenceStore(ctx.redis, ctx.config.redisKeyPrefix);
  const states = extensionStates(ctx);
  // one read at a time per resource: a later change is never overtaken by an earlier one's read
  const chains = new Map<string, Promise<void>>();
  /** The frame of a resource's change: an extension's state, a park slot's, or none (a mailbox). */
  const frameOf = async (customerId: string, resource: string): Promise<Pick<PlatformEvent, 'event_type' | 'resource' | 'resource_id' | 'data'> | null> => {
    const ext = await states.ofExtension(customerId, resource);
    if (ext) return { event_type: EXTENSION_STATE_EVENT, resource: 'extension', resource_id: ext.id, data: { ...ext, customer_id: customerId } };
    const slot = await states.ofSlot(customerId, resource);
    if (slot) return { event_type: SLOT_STATE_EVENT, resource: 'parkslot', resource_id: String(slot.slot), data: { ...slot, customer_id: customerId } };
    return null;
  };
  const onChange = (c: PresenceChange) => {
    if (c.kind === 'message-summary' || !hub.hasCustomer(c.customerId)) return;
    const key = `${c.customerId}:${c.resource}`;
    const next = (chains.get(key) ?? Promise.resolve())
      .then(async () => {
        const frame = await frameOf(c.customerId, c.resource);
        if (frame) hub.dispatch({ id: newId(), customer_id: c.customerId, timestamp: new Date().toISOString(), ...frame });
      })
      .catch((err: unknown) => ctx.logger.warn({ err: String(err), resource: c.resource }, 'lamp state not sent'));
    chains.set(key, next);
    void next.then(() => {
      if (chains.get(key) === next) chains.delete(key);
    });
  };
  const sub: Redis = ctx.redis.duplicate();
  sub.on('error', (err: Error) => ctx.logger.warn({ err: err.message }, 'presence feed: redis error'));
  const stop = await store.listen(sub, onChange);
  return async () => {
    await stop();
    sub.disconnect();
  };
}
