/**
 * <Enqueue>: queue_join with this platform's queue id (a UUID or its QU… SID) or a queue name (the
 * account's queue of that name, made on first use as Twilio does). action, waitUrl and workflowSid
 * are refused.
 */
import type { TwimlElement } from '../parse';
import { Attrs, type Program } from '../program';
import { queueJoinOption } from './dial';

export function compileEnqueue(p: Program, el: TwimlElement): void {
  new Attrs(el, []);
  p.add('queue_join', queueJoinOption(el));
}
