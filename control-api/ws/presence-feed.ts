/**
 * The busy-lamp feed of the WebSocket (our extension, docs/pbx.md "Console"): every copy of
 * control-api listens to the presence change channel (core/presence/store.ts, the one every
 * media-app node publishes on) and, for a change of an extension of a customer that has sockets
 * here, reads the extension's state (control-api/pbx/extension-states.ts) and sends it to the
 * sockets subscribed to its topic as `extension_state_updated` (topic resource `extension`, id the
 * extension's). A frame of the socket only: not stored, not a webhook (the state is in Redis, and
 * GET /v1.0/extension_states reads it whole). Changes of one resource are read in their order.
 */
import type { Redis } from 'ioredis';
import type { AppContext } from '../context';
import type { Hub } from './hub';
import { PresenceStore, type PresenceChange } from '../../core/presence/store';
import { newId } from '../../core/ids';
import { extensionStates } from '../pbx/extension-states';

export const EXTENSION_STATE_EVENT = 'extension_state_updated';

export async function startPresenceFeed(ctx: AppContext, hub: Hub): Promise<() => Promise<void>> {
  const store = new PresenceStore(ctx.redis, ctx.config.redisKeyPrefix);
  const states = extensionStates(ctx);
  // one read at a time per resource: a later change is never overtaken by an earlier one's read
  const chains = new Map<string, Promise<void>>();
  const onChange = (c: PresenceChange) => {
    if (c.kind === 'message-summary' || !hub.hasCustomer(c.customerId)) return;
    const key = `${c.customerId}:${c.resource}`;
    const next = (chains.get(key) ?? Promise.resolve())
      .then(async () => {
        const s = await states.ofExtension(c.customerId, c.resource);
        if (!s) return; // a park slot or a mailbox: the parkedcall events tell those
        hub.dispatch({
          id: newId(),
          event_type: EXTENSION_STATE_EVENT,
          customer_id: c.customerId,
          resource: 'extension',
          resource_id: s.id,
          timestamp: new Date().toISOString(),
          data: { ...s, customer_id: c.customerId },
        });
      })
      .catch((err: unknown) => ctx.logger.warn({ err: String(err), resource: c.resource }, 'extension state not sent'));
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
