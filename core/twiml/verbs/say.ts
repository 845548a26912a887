/**
 * <Say>: talk. Voices map to this platform's TTS providers: woman/alice → provider_b (female),
 * man → provider_c (male), Polly.* / Google.* and no voice → the default provider (the named voice
 * itself is not available here). `language` passes through (default en-US). SSML subset inside
 * <Say>: break, prosody, emphasis, p, s, say-as, sub (anything else is a 12200).
 */
import { schemaError } from '../errors';
import { childElements, isElement, type TwimlElement, type TwimlNode } from '../parse';
import { Attrs, looped, type Program } from '../program';

const SSML_TAGS: Readonly<Record<string, readonly string[]>> = {
  break: ['time', 'strength'],
  prosody: ['rate', 'pitch', 'volume'],
  emphasis: ['level'],
  p: [],
  s: [],
  'say-as': ['interpret-as', 'format'],
  sub: ['alias'],
};

export function voiceProvider(voice: string | undefined): string | undefined {
  if (!voice) return undefined;
  const v = voice.toLowerCase();
  if (v === 'woman' || v === 'alice') return 'provider_b';
  if (v === 'man') return 'provider_c';
  if (v.startsWith('polly.') || v.startsWith('google.')) return undefined;
  throw schemaError(`<Say> voice "${voice}" is not known`);
}

const escapeXml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function ssml(nodes: TwimlNode[]): string {
  return nodes
    .map((n) => {
      if (!isElement(n)) return escapeXml(n.text);
      const known = SSML_TAGS[n.name];
      if (!known) throw schemaError(`<Say> does not support SSML <${n.name}>`);
      new Attrs(n, known);
      const attrs = Object.entries(n.attrs)
        .map(([k, v]) => ` ${k}="${escapeXml(v)}"`)
        .join('');
      return n.children.length ? `<${n.name}${attrs}>${ssml(n.children)}</${n.name}>` : `<${n.name}${attrs}/>`;
    })
    .join('');
}

/** The talk option of a <Say> (also used nested in <Gather>). */
export function sayOption(el: TwimlElement, interruptible: boolean): { option: Record<string, unknown>; loop: number } {
  const a = new Attrs(el, ['voice', 'language', 'loop']);
  const hasSsml = childElements(el).length > 0;
  const text = hasSsml
    ? `<speak>${ssml(el.children)}</speak>`
    : el.children
        .map((c) => (isElement(c) ? '' : c.text))
        .join('')
        .trim();
  if (!text) throw schemaError('<Say> needs text');
  const option: Record<string, unknown> = { text, language: a.str('language') ?? 'en-US' };
  const provider = voiceProvider(a.str('voice'));
  if (provider) option.provider = provider;
  if (interruptible) option.digits_handle = 'next';
  return { option, loop: a.int('loop', 0, 1000) ?? 1 };
}

export function compileSay(p: Program, el: TwimlElement, interruptible = false): void {
  const { option, loop } = sayOption(el, interruptible);
  looped(p, loop, () => p.add('talk', option));
}
