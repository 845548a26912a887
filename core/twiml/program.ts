/**
 * What a verb compiles into: flow actions appended in order, each with a fresh id, and the attribute
 * readers every verb uses (an attribute the verb does not know, or a value out of range, is a 12200).
 */
import { randomUUID } from 'node:crypto';
import { EMPTY_UUID, type Action, type ActionType } from '../flow/action';
import { schemaError } from './errors';
import type { TwimlElement } from './parse';

/** Variables the compiled actions and the twiml action share (core/twiml/README.md). */
export const TWIML_VARS = {
  /** `twiml.param.<Name>`: an extra request parameter of the next twiml fetch (Digits, RecordingUrl, ...), cleared once sent. */
  paramPrefix: 'twiml.param.',
  /** The Gather's finishOnKey: stripped from the end of Digits (Twilio leaves it out). */
  finishOnKey: 'twiml.finish_on_key',
  /** A speech Gather's result: its words and keys together (empty: nothing was gathered). */
  gathered: 'twiml.gathered',
  /** A recording the next twiml fetch waits for (Record's action is fetched when the recording ends). */
  waitRecording: 'twiml.wait_recording',
} as const;

export interface CompileOptions {
  /** The URL the document came from: relative URLs resolve against it, and Gather/Record without `action` post to it. */
  documentUrl?: string;
  /** The method it was fetched with (the default of Gather/Record's `method`). */
  method?: 'GET' | 'POST';
  /** Told of each warning (Twilio's 13xxx: the document runs, with the attribute's default). */
  warn?: (code: number, message: string) => void;
}

export class Program {
  readonly actions: Action[] = [];

  constructor(readonly opts: CompileOptions) {}

  /** Appends an action; returns its id. */
  add(type: ActionType, option: Record<string, unknown>, id: string = randomUUID()): string {
    this.actions.push({ id, next_id: EMPTY_UUID, type, option });
    return id;
  }

  /** A warning of Twilio's (the document still compiles): passed to the caller's `warn`. */
  warn(code: number, message: string): void {
    this.opts.warn?.(code, message);
  }

  /** A do-nothing action with a known id, to jump to ("the next verb"). */
  anchor(id: string, verb: string): void {
    this.add('variable_set', { key: 'twiml.verb', value: verb }, id);
  }

  /** A URL attribute resolved against the document's URL; must end up http(s). */
  url(verb: string, attr: string, value: string): string {
    let u: URL;
    try {
      u = this.opts.documentUrl ? new URL(value, this.opts.documentUrl) : new URL(value);
    } catch {
      throw schemaError(`<${verb}> ${attr} is not a URL`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw schemaError(`<${verb}> ${attr} must be an http or https URL`);
    return u.toString();
  }
}

/** Attribute reader of one element: refuses attributes not in `known`. */
export class Attrs {
  constructor(
    private readonly el: TwimlElement,
    known: readonly string[],
  ) {
    for (const k of Object.keys(el.attrs)) if (!known.includes(k)) throw schemaError(`<${el.name}> has no attribute "${k}"`);
  }

  str(name: string): string | undefined {
    return this.el.attrs[name];
  }

  int(name: string, min: number, max: number): number | undefined {
    const v = this.el.attrs[name];
    if (v === undefined) return undefined;
    const n = /^\s*-?\d+\s*$/.test(v) ? Number(v) : NaN;
    if (!Number.isInteger(n) || n < min || n > max) throw schemaError(`<${this.el.name}> ${name} must be an integer from ${min} to ${max}`);
    return n;
  }

  bool(name: string): boolean | undefined {
    const v = this.el.attrs[name];
    if (v === undefined) return undefined;
    if (v === 'true') return true;
    if (v === 'false') return false;
    throw schemaError(`<${this.el.name}> ${name} must be true or false`);
  }

  oneOf<T extends string>(name: string, values: readonly T[]): T | undefined {
    const v = this.el.attrs[name];
    if (v === undefined) return undefined;
    const hit = values.find((x) => x.toLowerCase() === v.toLowerCase());
    if (!hit) throw schemaError(`<${this.el.name}> ${name} must be one of ${values.join(', ')}`);
    return hit;
  }

  method(name = 'method'): 'GET' | 'POST' | undefined {
    return this.oneOf(name, ['GET', 'POST'] as const);
  }
}

/** Twilio's loop: 0 means "until the call ends" (here 1000 times), else 1-1000. */
export const LOOP_FOREVER = 1000;

/** Repeats the actions `body` adds `loop` times, with a goto back rather than copies. */
export function looped(p: Program, loop: number, body: () => string): void {
  const first = body();
  const times = loop === 0 ? LOOP_FOREVER : loop;
  if (times > 1) p.add('goto', { target_id: first, loop_count: times - 1 });
}
