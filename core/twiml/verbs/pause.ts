/** <Pause>: sleep `length` seconds (default 1). */
import { schemaError } from '../errors';
import { textOf, type TwimlElement } from '../parse';
import { Attrs, type Program } from '../program';

export function compilePause(p: Program, el: TwimlElement): void {
  const a = new Attrs(el, ['length']);
  if (textOf(el) || el.children.some((c) => 'name' in c)) throw schemaError('<Pause> takes no content');
  p.add('sleep', { duration: (a.int('length', 0, 600) ?? 1) * 1000 });
}
