/**
 * <Enqueue>: queue_join with this platform's queue id (a UUID or its QU… SID) or a queue name (the
 * account's queue of that name, made on first use as Twilio does). With `action`, the URL is fetched
 * (`method`, default POST) once the caller leaves the queue with the call still up, with QueueResult
 * (bridged, leave), QueueSid and QueueTime; without it the next verb runs. waitUrl (waitUrlMethod,
 * default POST): a wait document (Play, Say, Pause, Redirect, Leave, Hangup) looped while the caller
 * waits, instead of the queue's wait audio; waitUrl="" keeps the queue's own. workflowSid is refused.
 */
import type { TwimlElement } from '../parse';
import { Attrs, TWIML_VARS, type Program } from '../program';
import { queueJoinOption } from './dial';

export function compileEnqueue(p: Program, el: TwimlElement): void {
  const a = new Attrs(el, ['action', 'method', 'waitUrl', 'waitUrlMethod']);
  const method = a.method();
  const action = a.str('action');
  const waitUrl = a.str('waitUrl');
  const waitMethod = a.method('waitUrlMethod');
  p.add('queue_join', {
    ...queueJoinOption(el),
    ...(waitUrl !== undefined && waitUrl !== '' ? { wait_url: p.url('Enqueue', 'waitUrl', waitUrl), wait_method: waitMethod ?? 'POST' } : {}),
  });
  if (action === undefined) return;
  const url = p.url('Enqueue', 'action', action);
  p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}QueueResult`, value: '${svc.queuecall.result}' });
  p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}QueueSid`, value: '${svc.queuecall.queue_sid}' });
  p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}QueueTime`, value: '${svc.queuecall.wait_seconds}' });
  p.add('twiml', { url, method: method ?? 'POST' });
}
