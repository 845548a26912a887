/**
 * <Hangup>: hangup. <Reject>: refuses the call before it is answered: reason "busy" → 486 Busy Here,
 * "rejected" (the default) → 603 Decline (hangup reasons busy and failed on an unanswered call).
 */
import { schemaError } from '../errors';
import { childElements, type TwimlElement } from '../parse';
import { Attrs, type Program } from '../program';

export function compileHangup(p: Program, el: TwimlElement): void {
  new Attrs(el, []);
  if (childElements(el).length) throw schemaError('<Hangup> takes no nested verbs');
  p.add('hangup', {});
}

export function compileReject(p: Program, el: TwimlElement): void {
  const a = new Attrs(el, ['reason']);
  const reason = a.oneOf('reason', ['rejected', 'busy'] as const) ?? 'rejected';
  p.add('hangup', { reason: reason === 'busy' ? 'busy' : 'failed' });
}
