/**
 * A wait document: what <Conference waitUrl> and <Enqueue waitUrl> return, played in a loop while the
 * caller waits. Pure: no I/O. Its verbs become steps the waiting side plays one after the other:
 * Play, Say and Pause (compiled by their verb modules: play, talk, sleep), Redirect (fetch that
 * document next) and, in an Enqueue's wait document, Leave (the caller leaves the queue) and Hangup.
 * Any other verb is a 12200 naming it, so a wait document either compiles whole or not at all.
 */
import type { Action } from '../flow/action';
import { validateActions } from '../flow/validate';
import { schemaError, TwimlError } from './errors';
import { isElement, parseTwiml, textOf } from './parse';
import { Attrs, Program, type CompileOptions } from './program';
import { compilePause } from './verbs/pause';
import { compilePlay } from './verbs/play';
import { compileSay } from './verbs/say';

/** One thing the waiting side does; `media` actions are play, talk or sleep, repeated `times`. */
export type WaitStep = { kind: 'media'; action: Action; times: number } | { kind: 'redirect'; url: string; method: 'GET' | 'POST' } | { kind: 'leave' } | { kind: 'hangup' };

/** `announcement`: a Conferences/Participants AnnounceUrl document (Play and Say only, as Twilio). */
export type WaitKind = 'conference' | 'queue' | 'announcement' | 'whisper';

const MEDIA = { Play: compilePlay, Say: compileSay, Pause: compilePause } as const;
const MEDIA_TYPES = new Set(['play', 'talk', 'sleep']);

/** A URL of an audio file (played as is, in a loop) rather than a TwiML document. */
export const isAudioUrl = (url: string): boolean => /\.(wav|mp3)$/i.test(new URL(url).pathname);

function mediaSteps(verb: keyof typeof MEDIA, el: Parameters<typeof compilePlay>[1], opts: CompileOptions): WaitStep[] {
  const p = new Program(opts);
  MEDIA[verb](p, el);
  const v = validateActions(p.actions, { field: 'twiml' });
  if (!v.ok) throw new TwimlError(12200, `${v.problems[0]!.field}: ${v.problems[0]!.message}`);
  const steps: WaitStep[] = [];
  for (const a of v.actions) {
    if (a.type === 'goto') {
      const last = steps[steps.length - 1];
      const extra = Number((a.option as { loop_count?: number }).loop_count ?? 0);
      if (last?.kind === 'media') last.times += extra;
      continue;
    }
    if (!MEDIA_TYPES.has(a.type)) throw schemaError(`<${verb}> with these attributes cannot be in a wait document`);
    steps.push({ kind: 'media', action: a, times: 1 });
  }
  return steps;
}

/** Compiles a wait document; throws TwimlError (12100 parse, 12200 schema). */
export function compileWaitDocument(text: string, kind: WaitKind, opts: CompileOptions = {}): WaitStep[] {
  const root = parseTwiml(text);
  for (const k of Object.keys(root.attrs)) throw schemaError(`<Response> has no attribute "${k}"`);
  const steps: WaitStep[] = [];
  for (const node of root.children) {
    if (!isElement(node)) {
      if (node.text.trim()) throw schemaError('<Response> contains text outside a verb');
      continue;
    }
    const name = node.name;
    if (kind === 'announcement' && name !== 'Play' && name !== 'Say') throw schemaError(`<${name}> is not allowed in an announcement (only <Play> and <Say>)`);
    if (name === 'Play' || name === 'Say' || name === 'Pause') steps.push(...mediaSteps(name, node, opts));
    else if (name === 'Redirect') {
      const a = new Attrs(node, ['method']);
      const url = textOf(node);
      if (!url) throw schemaError('<Redirect> needs a URL');
      steps.push({ kind: 'redirect', url: new Program(opts).url('Redirect', 'URL', url), method: a.method() ?? 'POST' });
    } else if (kind === 'queue' && (name === 'Leave' || name === 'Hangup')) {
      new Attrs(node, []);
      steps.push({ kind: name === 'Leave' ? 'leave' : 'hangup' });
    } else throw schemaError(`<${name}> is not allowed in a ${kind === 'whisper' ? '<Dial><Queue url>' : kind === 'queue' ? 'queue wait' : 'conference wait'} document`);
  }
  return steps;
}
