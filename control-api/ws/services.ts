/**
 * Everything control-api runs for events, in one call for main.ts:
 *   const events = await startEventServices(server, ctx);   // after server.listen
 *   ...; await events.close();                                  // on shutdown, before db.destroy()
 * WebSocket fan-out (every copy), webhook delivery, Twilio status callbacks and the events store
 * (consumer groups: one copy each).
 */
import type http from 'node:http';
import type { AppContext } from '../context';
import { attachWebSocket } from './index';
import { startWebhooks } from '../webhooks';
import { startEventStore } from '../../core/events/store';
import { eventStreamKey } from '../../core/events/bus';
import { startAttachments } from '../attachments';
import { startTwilioCallbacks } from '../twilio/callbacks';

export async function startEventServices(server: http.Server, ctx: AppContext): Promise<{ close(): Promise<void> }> {
  const ws = await attachWebSocket(server, ctx);
  const webhooks = await startWebhooks(ctx);
  const store = await startEventStore(ctx.db, ctx.redis, { stream: eventStreamKey(ctx.config.redisKeyPrefix), onError: (err) => ctx.logger.warn({ err: String(err) }, 'events store write failed') });
  const attachments = await startAttachments(server, ctx);
  const twilioCallbacks = await startTwilioCallbacks(ctx);
  return {
    async close() {
      await attachments.close();
      await twilioCallbacks.close();
      await ws.close();
      await webhooks.close();
      await store.close();
    },
  };
}
