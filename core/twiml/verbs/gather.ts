/**
 * <Gather>. DTMF only (the default input): nested Say (cut short by a key), Play and Pause, then
 * digits_receive. With speech in `input`: one speech_gather action that plays the nested verbs while
 * it listens (gather-speech.ts). With a result (or with actionOnEmptyResult) the `action` URL
 * (default: the document's own URL) is fetched with Digits or SpeechResult and Confidence, and its
 * TwiML replaces the rest of this document; with none the next verb runs, as on Twilio.
 * enhanced, profanityFilter and debug are accepted and have no effect.
 */
import { randomUUID } from 'node:crypto';
import { schemaError } from '../errors';
import { childElements, textOf, type TwimlElement } from '../parse';
import { Attrs, TWIML_VARS, type Program } from '../program';
import { compilePause } from './pause';
import { compilePlay } from './play';
import { compileSay } from './say';
import { speechGatherOption } from './gather-speech';

const ATTRS = [
  'input',
  'action',
  'method',
  'timeout',
  'numDigits',
  'finishOnKey',
  'speechTimeout',
  'maxSpeechTime',
  'hints',
  'bargeIn',
  'actionOnEmptyResult',
  'language',
  'speechModel',
  'enhanced',
  'profanityFilter',
  'debug',
  'partialResultCallback',
  'partialResultCallbackMethod',
];

export function compileGather(p: Program, el: TwimlElement): void {
  const a = new Attrs(el, ATTRS);
  const input = (a.str('input') ?? 'dtmf').toLowerCase().split(/\s+/).filter(Boolean);
  if (!input.length || input.some((i) => i !== 'dtmf' && i !== 'speech')) throw schemaError('<Gather> input must be dtmf, speech or "dtmf speech"');
  const dtmf = input.includes('dtmf');
  const finishOnKey = a.str('finishOnKey') ?? '#';
  if (!/^[0-9#*]?$/.test(finishOnKey)) throw schemaError('<Gather> finishOnKey must be one of 0-9, #, * or empty');
  const timeout = a.int('timeout', 0, 600) ?? 5;
  const numDigits = a.int('numDigits', 1, 100);
  const onEmpty = a.bool('actionOnEmptyResult') ?? false;
  a.bool('enhanced');
  a.bool('profanityFilter');
  a.bool('debug');
  if (textOf(el)) throw schemaError('<Gather> takes nested Say, Play and Pause, not text');

  p.add('variable_set', { key: TWIML_VARS.finishOnKey, value: dtmf ? finishOnKey : '' });
  if (input.includes('speech')) {
    p.add('speech_gather', speechGatherOption(p, el, a, { dtmf, timeout, numDigits, finishOnKey }));
  } else {
    if (a.str('partialResultCallback') !== undefined) throw schemaError('<Gather> partialResultCallback needs speech in input');
    a.method('partialResultCallbackMethod');
    for (const k of ['speechTimeout', 'maxSpeechTime', 'hints', 'bargeIn', 'language', 'speechModel']) {
      if (a.str(k) !== undefined) speechOnly(a, k);
    }
    for (const child of childElements(el)) {
      if (child.name === 'Say') compileSay(p, child, true);
      else if (child.name === 'Play') compilePlay(p, child);
      else if (child.name === 'Pause') compilePause(p, child);
      else throw schemaError(`<Gather> cannot contain <${child.name}>`);
    }
    p.add('digits_receive', { duration: timeout * 1000, length: numDigits ?? 0, key: finishOnKey });
  }
  const action = a.str('action');
  const url = action !== undefined ? p.url('Gather', 'action', action) : p.opts.documentUrl;
  if (!url) return;
  const next = randomUUID();
  const speech = input.includes('speech');
  // speech: what was heard or keyed this time (svc.call.digits is only cleared when keys are collected)
  const gathered = speech ? TWIML_VARS.gathered : 'svc.call.digits';
  if (speech) p.add('variable_set', { key: TWIML_VARS.gathered, value: dtmf ? '${svc.speech.result}${svc.call.digits}' : '${svc.speech.result}' });
  if (!onEmpty) p.add('condition_variable', { condition: '>', variable: gathered, value_type: 'length', value_length: 0, false_target_id: next });
  if (dtmf) p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}Digits`, value: '${svc.call.digits}' });
  if (speech) {
    p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}SpeechResult`, value: '${svc.speech.result}' });
    p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}Confidence`, value: '${svc.speech.confidence}' });
  }
  p.add('twiml', { url, method: a.method() ?? 'POST' });
  p.anchor(next, 'Gather');
}

/** The speech attributes of a DTMF-only Gather are checked as Twilio's values, with no effect. */
function speechOnly(a: Attrs, k: string): void {
  if (k === 'speechTimeout' && a.str(k) !== 'auto') a.int(k, 0, 600);
  if (k === 'maxSpeechTime') a.int(k, 1, 60);
  if (k === 'bargeIn') a.bool(k);
}
