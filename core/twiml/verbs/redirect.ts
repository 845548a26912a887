/** <Redirect>: fetch the URL and run its TwiML instead of the rest of this document. */
import { schemaError } from '../errors';
import { textOf, type TwimlElement } from '../parse';
import { Attrs, type Program } from '../program';

export function compileRedirect(p: Program, el: TwimlElement): void {
  const a = new Attrs(el, ['method']);
  const url = textOf(el);
  if (!url) throw schemaError('<Redirect> needs a URL');
  p.add('twiml', { url: p.url('Redirect', 'URL', url), method: a.method() ?? 'POST' });
}
