/**
 * <Gather>: nested Say (cut short by a key), Play and Pause, then digits_receive; with digits (or with
 * actionOnEmptyResult) the `action` URL (default: the document's own URL) is fetched with Digits and
 * its TwiML replaces the rest of this document; with none the next verb runs, as on Twilio.
 * input="speech" alone is refused (12200): the flow runner has no speech gather yet; with
 * "dtmf speech" only DTMF is collected. speechTimeout, hints, language, speechModel, enhanced,
 * profanityFilter are accepted and have no effect.
 */
import { randomUUID } from 'node:crypto';
import { schemaError } from '../errors';
import { childElements, textOf, type TwimlElement } from '../parse';
import { Attrs, TWIML_VARS, type Program } from '../program';
import { compilePause } from './pause';
import { compilePlay } from './play';
import { compileSay } from './say';

const ATTRS = ['input', 'action', 'method', 'timeout', 'numDigits', 'finishOnKey', 'speechTimeout', 'hints', 'actionOnEmptyResult', 'language', 'speechModel', 'enhanced', 'profanityFilter'];

export function compileGather(p: Program, el: TwimlElement): void {
  const a = new Attrs(el, ATTRS);
  const input = (a.str('input') ?? 'dtmf').toLowerCase().split(/\s+/).filter(Boolean);
  if (input.some((i) => i !== 'dtmf' && i !== 'speech')) throw schemaError('<Gather> input must be dtmf, speech or "dtmf speech"');
  if (!input.includes('dtmf')) throw schemaError('<Gather> input="speech" is not supported here (only DTMF is collected)');
  const finishOnKey = a.str('finishOnKey') ?? '#';
  if (!/^[0-9#*]?$/.test(finishOnKey)) throw schemaError('<Gather> finishOnKey must be one of 0-9, #, * or empty');
  const timeout = a.int('timeout', 0, 600) ?? 5;
  const numDigits = a.int('numDigits', 1, 100);
  const onEmpty = a.bool('actionOnEmptyResult') ?? false;
  if (a.str('speechTimeout') !== 'auto') a.int('speechTimeout', 0, 600);
  a.bool('enhanced');
  a.bool('profanityFilter');
  if (textOf(el)) throw schemaError('<Gather> takes nested Say, Play and Pause, not text');

  p.add('variable_set', { key: TWIML_VARS.finishOnKey, value: finishOnKey });
  for (const child of childElements(el)) {
    if (child.name === 'Say') compileSay(p, child, true);
    else if (child.name === 'Play') compilePlay(p, child);
    else if (child.name === 'Pause') compilePause(p, child);
    else throw schemaError(`<Gather> cannot contain <${child.name}>`);
  }
  p.add('digits_receive', { duration: timeout * 1000, length: numDigits ?? 0, key: finishOnKey });
  const action = a.str('action');
  const url = action !== undefined ? p.url('Gather', 'action', action) : p.opts.documentUrl;
  if (!url) return;
  const next = randomUUID();
  if (!onEmpty) p.add('condition_variable', { condition: '>', variable: 'svc.call.digits', value_type: 'length', value_length: 0, false_target_id: next });
  p.add('variable_set', { key: `${TWIML_VARS.paramPrefix}Digits`, value: '${svc.call.digits}' });
  p.add('twiml', { url, method: a.method() ?? 'POST' });
  p.anchor(next, 'Gather');
}
