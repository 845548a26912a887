/**
 * <Refer action method><Sip>sip:…</Sip></Refer>: a SIP REFER to the caller's leg (sip_refer). With
 * `action` (resolved against the document) its TwiML replaces the rest of this document, with
 * ReferCallStatus (in-progress or failed) and ReferSipResponseCode; without one the next verb runs.
 * Exactly one <Sip> noun holding a sip: or sips: URI; anything else is a 12200.
 */
import { schemaError } from '../errors';
import { childElements, textOf, type TwimlElement } from '../parse';
import { Attrs, TWIML_VARS, type Program } from '../program';

const SIP_URI = /^sips?:[^\s<>"]+$/i;

export function compileRefer(p: Program, el: TwimlElement): void {
  const a = new Attrs(el, ['action', 'method']);
  if (textOf(el)) throw schemaError('<Refer> takes one <Sip> noun, not text');
  const kids = childElements(el);
  if (kids.length !== 1 || kids[0]!.name !== 'Sip') throw schemaError(`<Refer> must contain exactly one <Sip> (${kids.map((k) => `<${k.name}>`).join(', ') || 'nothing'} given)`);
  const sip = kids[0]!;
  new Attrs(sip, []);
  if (childElements(sip).length) throw schemaError('<Sip> in <Refer> takes a SIP URI only');
  const target = textOf(sip);
  if (!SIP_URI.test(target)) throw schemaError('<Sip> in <Refer> must be a sip: or sips: URI');
  if (target.length > 1024) throw schemaError('<Sip> in <Refer> must be at most 1024 characters');
  const method = a.method();
  const action = a.str('action');
  p.add('sip_refer', { refer_to: target });
  if (action === undefined) return;
  p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}ReferCallStatus`, value: '${svc.refer.status}' });
  p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}ReferSipResponseCode`, value: '${svc.refer.sip_code}' });
  p.add('twiml', { url: p.url('Refer', 'action', action), method: method ?? 'POST' });
}
