/**
 * <Enqueue>: queue_join with this platform's queue id (a UUID or its QU… SID) or a queue name (the
 * account's queue of that name, made on first use as Twilio does). With `action`, the URL is fetched
 * (`method`, default POST) once the caller leaves the queue with the call still up, with QueueResult
 * (bridged, leave), QueueSid and QueueTime; without it the next verb runs. waitUrl and workflowSid are refused.
 */
import type { TwimlElement } from '../parse';
import { Attrs, TWIML_VARS, type Program } from '../program';
import { queueJoinOption } from './dial';

export function compileEnqueue(p: Program, el: TwimlElement): void {
  const a = new Attrs(el, ['action', 'method']);
  const method = a.method();
  const action = a.str('action');
  p.add('queue_join', queueJoinOption(el));
  if (action === undefined) return;
  const url = p.url('Enqueue', 'action', action);
  p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}QueueResult`, value: '${svc.queuecall.result}' });
  p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}QueueSid`, value: '${svc.queuecall.queue_sid}' });
  p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}QueueTime`, value: '${svc.queuecall.wait_seconds}' });
  p.add('twiml', { url, method: method ?? 'POST' });
}
