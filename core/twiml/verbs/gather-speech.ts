/**
 * The speech_gather option of a <Gather> with speech in `input`: the nested Say/Play/Pause become its
 * prompts (played while it listens), and Twilio's speech attributes map to the recogniser:
 * `language` (BCP-47, default en-US): the local recogniser (pocketsphinx) has English only, so another
 * language needs `speechModel` `deepgram*`, `cartesia*` or `elevenlabs*` (that vendor's recogniser, configured on the nodes); anything
 * else is a 12200. `hints` (comma-separated) → phrases (pocketsphinx recognises only these; Deepgram
 * takes them as keywords); hint classes (`$OOV_CLASS_…`) are 12200. `speechTimeout` seconds or `auto`,
 * `maxSpeechTime` 1-60 s, `bargeIn` (default true), `partialResultCallback` (+ `…Method`, default POST)
 * → partial_callback: each recognised segment is sent there while listening.
 */
import { schemaError } from '../errors';
import { childElements, textOf, type TwimlElement } from '../parse';
import { Attrs, type Program } from '../program';
import { sayOption } from './say';

/** At most this many prompts in one speech Gather (each loop of a nested verb is one). */
export const MAX_PROMPTS = 100;
/** A nested verb's loop="0" in a speech Gather: this many times. */
const LOOP_ZERO = 10;

const BCP47 = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/;

export interface GatherBasics {
  dtmf: boolean;
  timeout: number;
  numDigits: number | undefined;
  finishOnKey: string;
}

const CLOUD_RECOGNISERS = ['deepgram', 'cartesia', 'elevenlabs'] as const;

export function speechGatherOption(p: Program, el: TwimlElement, a: Attrs, g: GatherBasics): Record<string, unknown> {
  const language = a.str('language') ?? 'en-US';
  if (!BCP47.test(language)) throw schemaError('<Gather> language must be a language tag such as en-US');
  const model = a.str('speechModel');
  // speechModel names the recogniser by its vendor prefix (deepgram_nova-2, cartesia_ink-whisper, elevenlabs_scribe)
  const vendor = model === undefined ? undefined : CLOUD_RECOGNISERS.find((v) => model.toLowerCase().startsWith(v));
  const provider = vendor ?? 'pocketsphinx';
  if (provider === 'pocketsphinx' && !language.toLowerCase().startsWith('en')) {
    throw schemaError(`<Gather> language ${language} is not supported by the speech recogniser (English only; speechModel="deepgram_nova-2" for others)`);
  }
  const speechTimeout = a.str('speechTimeout');
  const speechTimeoutMs = speechTimeout === undefined || speechTimeout === 'auto' ? 0 : a.int('speechTimeout', 1, 600)! * 1000;
  const maxSpeech = a.int('maxSpeechTime', 1, 60) ?? 60;
  const phrases = (a.str('hints') ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  if (phrases.some((h) => h.startsWith('$'))) throw schemaError('<Gather> hints: hint classes ($…) are not supported here');
  if (phrases.length > 500) throw schemaError('<Gather> hints: at most 500 phrases');
  if (phrases.some((h) => h.length > 200)) throw schemaError('<Gather> hints: each phrase at most 200 characters');

  const option: Record<string, unknown> = {
    prompts: prompts(p, el),
    barge_in: a.bool('bargeIn') ?? true,
    language,
    provider,
    timeout: g.timeout * 1000,
    speech_timeout: speechTimeoutMs,
    max_speech: maxSpeech * 1000,
    dtmf: g.dtmf,
  };
  if (phrases.length) option.phrases = phrases;
  const partial = a.str('partialResultCallback');
  const partialMethod = a.method('partialResultCallbackMethod');
  if (partial !== undefined) {
    option.partial_callback = p.url('Gather', 'partialResultCallback', partial);
    option.partial_callback_method = partialMethod ?? 'POST';
  }
  if (g.dtmf) {
    option.digits_length = g.numDigits ?? 0;
    option.digits_key = g.finishOnKey;
  }
  return option;
}

function prompts(p: Program, el: TwimlElement): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const times = (n: number) => (n === 0 ? LOOP_ZERO : n);
  for (const child of childElements(el)) {
    if (child.name === 'Say') {
      const { option, loop } = sayOption(child, false);
      for (let i = 0; i < times(loop); i++) out.push({ talk: option });
    } else if (child.name === 'Play') {
      const { url, loop } = playOf(p, child);
      for (let i = 0; i < times(loop); i++) out.push({ play: { stream_urls: [url] } });
    } else if (child.name === 'Pause') {
      out.push({ pause: pauseOf(child) * 1000 });
    } else throw schemaError(`<Gather> cannot contain <${child.name}>`);
    if (out.length > MAX_PROMPTS) throw schemaError(`<Gather> with speech plays at most ${MAX_PROMPTS} nested verbs (loops counted)`);
  }
  return out;
}

function playOf(p: Program, el: TwimlElement): { url: string; loop: number } {
  if (el.attrs.digits !== undefined) throw schemaError('<Play digits> is not supported inside a speech <Gather>');
  const loop = new Attrs(el, ['loop']).int('loop', 0, 1000) ?? 1;
  const url = textOf(el);
  if (!url) throw schemaError('<Play> needs a URL');
  return { url: p.url('Play', 'URL', url), loop };
}

function pauseOf(el: TwimlElement): number {
  const a = new Attrs(el, ['length']);
  if (textOf(el) || childElements(el).length) throw schemaError('<Pause> takes no content');
  return a.int('length', 0, 600) ?? 1;
}
