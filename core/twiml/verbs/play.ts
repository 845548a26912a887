/**
 * <Play>: play the URL (`loop` times; 0 = until the call ends, capped), or with `digits` send DTMF
 * (RFC 4733) where each `w` waits half a second. Within <Gather> a Play is not cut short by a key
 * (the key still counts towards the Gather's digits).
 */
import { schemaError } from '../errors';
import { textOf, type TwimlElement } from '../parse';
import { Attrs, looped, type Program } from '../program';

export function compilePlay(p: Program, el: TwimlElement): void {
  const a = new Attrs(el, ['loop', 'digits']);
  const loop = a.int('loop', 0, 1000) ?? 1;
  const digits = a.str('digits');
  if (digits !== undefined) {
    if (!/^[0-9A-Dw#*]+$/.test(digits)) throw schemaError('<Play> digits must be DTMF keys (0-9, A-D, #, *) or w');
    for (const part of digits.split(/(w+)/).filter(Boolean)) {
      if (part.startsWith('w')) p.add('sleep', { duration: 500 * part.length });
      else p.add('digits_send', { digits: part });
    }
    return;
  }
  const url = textOf(el);
  if (!url) throw schemaError('<Play> needs a URL');
  const resolved = p.url('Play', 'URL', url);
  looped(p, loop, () => p.add('play', { stream_urls: [resolved] }));
}
