/**
 * TwiML → flow actions. Pure: no I/O. Each verb has its module in verbs/ (as jambonz's feature
 * server has a task per verb); this file parses, walks <Response> and maps verb names to them.
 * Everything not listed is a 12200 naming the verb, so a document either compiles whole or not at all.
 */
import type { Action } from '../flow/action';
import { validateActions } from '../flow/validate';
import { schemaError, TwimlError } from './errors';
import { isElement, parseTwiml, type TwimlElement } from './parse';
import { type CompileOptions, Program } from './program';
import { compileConnect } from './verbs/conversation-relay';
import { compileDial } from './verbs/dial';
import { compileGather } from './verbs/gather';
import { compileHangup, compileReject } from './verbs/hangup';
import { compilePause } from './verbs/pause';
import { compilePlay } from './verbs/play';
import { compileEnqueue } from './verbs/queue';
import { compileRecord } from './verbs/record';
import { compileRedirect } from './verbs/redirect';
import { compileRefer } from './verbs/refer';
import { compileSay } from './verbs/say';
import { compileStreamStart, compileStreamStop } from './verbs/stream';

export { TwimlError } from './errors';
export { TWIML_VARS, type CompileOptions } from './program';

type VerbCompiler = (p: Program, el: TwimlElement) => void;

export const VERBS: Readonly<Record<string, VerbCompiler>> = {
  Say: (p, el) => compileSay(p, el),
  Play: compilePlay,
  Pause: compilePause,
  Gather: compileGather,
  Record: compileRecord,
  Dial: compileDial,
  Enqueue: compileEnqueue,
  Redirect: compileRedirect,
  Hangup: compileHangup,
  Reject: compileReject,
  Refer: compileRefer,
  Connect: compileConnect,
  Start: compileStreamStart,
  Stop: compileStreamStop,
};

/** Twilio verbs this platform does not run (a 12200 that says so rather than "unknown"). */
export const UNSUPPORTED_VERBS = ['Leave', 'Sms', 'Message', 'Echo', 'Pay', 'Prompt', 'Siprec'];

/** Compiles a document; throws TwimlError (12100 parse, 12200 schema). */
export function compileTwiml(text: string, opts: CompileOptions = {}): Action[] {
  const root = parseTwiml(text);
  for (const k of Object.keys(root.attrs)) throw schemaError(`<Response> has no attribute "${k}"`);
  const p = new Program(opts);
  for (const node of root.children) {
    if (!isElement(node)) {
      if (node.text.trim()) throw schemaError('<Response> contains text outside a verb');
      continue;
    }
    const verb = VERBS[node.name];
    if (!verb) throw schemaError(UNSUPPORTED_VERBS.includes(node.name) ? `<${node.name}> is not supported here` : `<${node.name}> is not a TwiML verb`);
    verb(p, node);
  }
  const v = validateActions(p.actions, { field: 'twiml' });
  if (!v.ok) {
    const first = v.problems[0]!;
    throw new TwimlError(12200, `${first.field}: ${first.message}`);
  }
  return v.actions;
}
