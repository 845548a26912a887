/**
 * `${...}` substitution encoded for the context the value lands in. A variable's value is data
 * (a caller's From, a digit string, a client-supplied variable): it must never add a query
 * parameter, a JSON member or a header line to the option it is written into.
 *   url     after `scheme://` percent-encoded (encodeURIComponent); a reference before it (one
 *           that supplies the whole URL or its scheme) is inserted as is: that URL is checked by
 *           the egress policy when it is fetched.
 *   json    inside a JSON string: JSON-escaped; outside one: a JSON number/true/false/null stays
 *           as it is, anything else becomes a quoted JSON string.
 *   form    percent-encoded (application/x-www-form-urlencoded bodies).
 *   header  control characters (CR, LF, NUL...) removed: SIP and e-mail header values.
 *   text    as is (talk text, variable_set values, names stored in rows).
 */
import type { ActionType } from './action';
import type { VariableLookup } from './variables';

export type ValueContext = 'text' | 'url' | 'json' | 'form' | 'header';

const REF_RE = /\$\{([^{}]*)\}/g;
// eslint-disable-next-line no-control-regex -- matches control characters on purpose, to remove them
const CONTROL_RE = /[\u0000-\u001f\u007f]/g;
const JSON_LITERAL_RE = /^(-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?|true|false|null)$/;

/** Is the end of `json` inside a string literal? (Values already inserted are escaped, so they do not confuse it.) */
function insideJsonString(json: string): boolean {
  let inside = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (inside && c === '\\') i++;
    else if (c === '"') inside = !inside;
  }
  return inside;
}

function encodeValue(value: string, context: ValueContext, before: string): string {
  switch (context) {
    case 'text':
      return value;
    case 'header':
      return value.replace(CONTROL_RE, '');
    case 'form':
      return encodeURIComponent(value);
    case 'url':
      return before.includes('://') ? encodeURIComponent(value) : value;
    case 'json':
      if (insideJsonString(before)) return JSON.stringify(value).slice(1, -1);
      return JSON_LITERAL_RE.test(value) ? value : JSON.stringify(value);
  }
}

/**
 * Replaces every `${name}` in one pass, each value encoded for `context`; unknown names become ""
 * (voipbin). Values are not re-scanned, so a value holding `${...}` cannot expand further.
 */
export function substitute(text: string, lookup: VariableLookup, context: ValueContext = 'text'): string {
  if (text.indexOf('${') < 0) return text;
  let out = '';
  let last = 0;
  for (const m of text.matchAll(REF_RE)) {
    out += text.slice(last, m.index);
    out += encodeValue(lookup(m[1]!.trim()) ?? '', context, out);
    last = m.index + m[0].length;
  }
  return out + text.slice(last);
}

/** Substitutes every string inside a value (objects and arrays walked) in one context; other values kept. */
export function substituteDeep<T>(value: T, lookup: VariableLookup, context: ValueContext = 'text'): T {
  if (typeof value === 'string') return substitute(value, lookup, context) as T;
  if (Array.isArray(value)) return value.map((v) => substituteDeep(v, lookup, context)) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = substituteDeep(v, lookup, context);
    return out as T;
  }
  return value;
}

/** The body context of a webhook_send by its data_type (default application/json). */
export function bodyContext(dataType: unknown): ValueContext {
  const mime = (typeof dataType === 'string' && dataType ? dataType : 'application/json').split(';')[0]!.trim().toLowerCase();
  if (mime === 'application/json' || mime.endsWith('+json')) return 'json';
  if (mime === 'application/x-www-form-urlencoded') return 'form';
  return 'text';
}

type FieldContext = ValueContext | ((option: Record<string, unknown>) => ValueContext);

/**
 * Where each substituted option field lands, per action type; a field not listed is text. Nested
 * values (arrays of URLs, address objects) take their field's context.
 */
const FIELD_CONTEXTS: Partial<Record<ActionType, Record<string, FieldContext>>> = {
  webhook_send: { uri: 'url', data_type: 'header', data: (o) => bodyContext(o.data_type) },
  fetch: { event_url: 'url' },
  play: { stream_urls: 'url' },
  amd: { voicemail_urls: 'url' },
  external_media_start: { url: 'url', external_host: 'url', status_callback: 'url' },
  // addresses become SIP Request-URI/From/To values (call, connect) or message/e-mail headers
  call: { source: 'header', destinations: 'header' },
  connect: { source: 'header', destinations: 'header', hold_music: 'url' },
  message_send: { source: 'header', destinations: 'header' },
  email_send: { destinations: 'header', subject: 'header' },
};

/** The context of one option field of an action type (exported for the docs and the tests). */
export function fieldContext(type: ActionType, field: string, option: Record<string, unknown>): ValueContext {
  const c = FIELD_CONTEXTS[type]?.[field];
  return typeof c === 'function' ? c(option) : (c ?? 'text');
}

/** An action's option with every `${...}` filled in, each field encoded for where it lands. */
export function substituteOption(type: ActionType, option: Record<string, unknown>, lookup: VariableLookup): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // fields whose context depends on another field (webhook_send.data on data_type) see it substituted
  const plain: Record<string, unknown> = { ...option };
  for (const [k, v] of Object.entries(option)) {
    if (typeof FIELD_CONTEXTS[type]?.[k] !== 'function') plain[k] = out[k] = substituteDeep(v, lookup, fieldContext(type, k, option));
  }
  for (const [k, v] of Object.entries(option)) {
    if (!(k in out)) out[k] = substituteDeep(v, lookup, fieldContext(type, k, plain));
  }
  return out;
}
