/**
 * <Enqueue>: queue_join with this platform's queue id (a UUID or its QU… SID); queue names, action,
 * waitUrl and workflowSid are refused. <Leave> (only meaningful in an Enqueue waitUrl) is refused.
 */
import { fromSid } from '../../twilio/sids';
import { schemaError } from '../errors';
import { textOf, type TwimlElement } from '../parse';
import { Attrs, type Program } from '../program';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function compileEnqueue(p: Program, el: TwimlElement): void {
  new Attrs(el, []);
  const t = textOf(el);
  const id = UUID.test(t) ? t.toLowerCase() : fromSid('QU', t);
  if (!id) throw schemaError('<Enqueue> must name a queue by its id or QU SID (names are not supported here)');
  p.add('queue_join', { queue_id: id });
}
