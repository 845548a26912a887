/**
 * Validation of a whole action list (POST/PUT /flows, POST /activeflows, fetched actions): every
 * option against its type, ids unique, targets inside the list. Problems name the action index and
 * the field, so INVALID_ARGUMENT details can point at them.
 */
import { ApiError } from '../errors';
import { EgressRefused, type EgressPolicy } from '../net';
import { fieldContext } from './encoding';
import { hasVariables } from './variables';
import { sipLiteralRefusal } from '../calls/sip-destination';
import { newId } from '../ids';
import { type Action, type ActionType, EMPTY_UUID, RESERVED_ACTION_IDS, RETIRED_TYPES, isActionType, isUnset } from './action';
import { ACTION_SPECS, targetsOf } from './registry';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface FlowProblem {
  /** Index of the top-level action at fault (-1: the list itself). */
  index: number;
  /** Path of the offending field, e.g. `actions[2].option.duration`. */
  field: string;
  message: string;
}

export interface ValidateOptions {
  /** Field name of the list in the request body; default `actions`. */
  field?: string;
  /** Give actions without an id a fresh one (spec: server-generated ids). Default true. */
  assignIds?: boolean;
  /** Longest accepted list; default 1000. */
  maxActions?: number;
  /**
   * When given, literal URLs the flow will fetch or dial (webhook_send, fetch, play, amd voicemail,
   * external media) must name a host the egress policy allows (no DNS here); URLs with `${...}`
   * are checked when they are used.
   */
  egress?: Pick<EgressPolicy, 'assertHost' | 'assertUrlSyntax'>;
}

export type ValidationResult = { ok: true; actions: Action[] } | { ok: false; problems: FlowProblem[] };

export function validateActions(input: unknown, opts: ValidateOptions = {}): ValidationResult {
  const problems: FlowProblem[] = [];
  const actions = checkList(input, opts.field ?? 'actions', -1, opts, problems);
  return problems.length === 0 && actions ? { ok: true, actions } : { ok: false, problems };
}

/** Same as validateActions, throwing INVALID_ARGUMENT with one detail per problem. */
export function parseActions(input: unknown, opts: ValidateOptions = {}): Action[] {
  const r = validateActions(input, opts);
  if (r.ok) return r.actions;
  throw flowInvalid(r.problems);
}

export function flowInvalid(problems: FlowProblem[]): ApiError {
  const first = problems[0];
  const message = first ? `${first.field}: ${first.message}` : 'invalid actions';
  return new ApiError('INVALID_ARGUMENT', message, {
    details: problems.map((p) => ({ field: p.field, index: p.index, message: p.message })),
  });
}

function checkList(input: unknown, path: string, topIndex: number, opts: ValidateOptions, problems: FlowProblem[]): Action[] | null {
  const max = opts.maxActions ?? 1000;
  if (!Array.isArray(input)) {
    problems.push({ index: topIndex, field: path, message: 'must be an array of actions' });
    return null;
  }
  if (input.length > max) {
    problems.push({ index: topIndex, field: path, message: `at most ${max} actions` });
    return null;
  }
  const out: Action[] = [];
  const positions: number[] = [];
  const ids = new Map<string, number>();
  input.forEach((raw, i) => {
    const at = `${path}[${i}]`;
    const index = topIndex >= 0 ? topIndex : i;
    // An action that fails still claims its id, so targets pointing at it are not reported twice.
    const rawId = raw && typeof raw === 'object' ? (raw as Record<string, unknown>).id : undefined;
    const a = checkAction(raw, at, index, opts, problems);
    const id = a?.id ?? (typeof rawId === 'string' && !isUnset(rawId) ? rawId : undefined);
    if (id === undefined) return;
    if (ids.has(id)) problems.push({ index, field: `${at}.id`, message: `duplicate id (also on action ${ids.get(id)})` });
    ids.set(id, i);
    if (a) {
      out.push(a);
      positions.push(i);
    }
  });
  // Targets must name an action of this same list.
  out.forEach((a, k) => {
    const i = positions[k]!;
    const at = `${path}[${i}]`;
    const index = topIndex >= 0 ? topIndex : i;
    if (!isUnset(a.next_id) && !ids.has(a.next_id)) {
      problems.push({ index, field: `${at}.next_id`, message: 'no action with this id in the flow' });
    }
    for (const t of targetsOf(a.type, a.option)) {
      if (!ids.has(t.id)) problems.push({ index, field: `${at}.option.${t.field}`, message: 'no action with this id in the flow' });
    }
  });
  return out;
}

function checkAction(raw: unknown, at: string, index: number, opts: ValidateOptions, problems: FlowProblem[]): Action | null {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push({ index, field: at, message: 'must be an object' });
    return null;
  }
  const r = raw as Record<string, unknown>;
  const before = problems.length;
  let id = r.id;
  if (isUnset(id)) {
    id = opts.assignIds === false ? EMPTY_UUID : newId();
  } else if (typeof id !== 'string' || !UUID_RE.test(id)) {
    problems.push({ index, field: `${at}.id`, message: 'must be a UUID' });
  } else if (RESERVED_ACTION_IDS.has(id)) {
    problems.push({ index, field: `${at}.id`, message: 'is a reserved id' });
  }
  const nextId = isUnset(r.next_id) ? EMPTY_UUID : r.next_id;
  if (typeof nextId !== 'string' || !UUID_RE.test(nextId)) {
    problems.push({ index, field: `${at}.next_id`, message: 'must be a UUID' });
  }
  const type = r.type;
  if (!isActionType(type)) {
    const hint = typeof type === 'string' && RETIRED_TYPES[type] ? `; use ${RETIRED_TYPES[type]}` : '';
    const msg = type === undefined ? 'is required' : `${JSON.stringify(type)} is not an action type${hint}`;
    problems.push({ index, field: `${at}.type`, message: msg });
    return null;
  }
  const rawOption = r.option ?? {};
  if (typeof rawOption !== 'object' || Array.isArray(rawOption)) {
    problems.push({ index, field: `${at}.option`, message: 'must be an object' });
    return null;
  }
  const parsed = ACTION_SPECS[type].schema.safeParse(rawOption);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const sub = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
      const missing = issue.code === 'invalid_type' && valueAt(rawOption, issue.path) === undefined;
      const message = missing ? 'is required' : issue.message;
      problems.push({ index, field: `${at}.option${sub}`, message });
    }
    return null;
  }
  const option = parsed.data;
  // call.actions is a flow of its own, with its own ids.
  if (type === 'call' && option.actions !== undefined) {
    const nested = checkList(option.actions, `${at}.option.actions`, index, opts, problems);
    if (nested) option.actions = nested;
  }
  if (opts.egress) {
    checkUrls(type, option, `${at}.option`, index, opts.egress, problems);
    checkSipDestinations(option, `${at}.option`, index, opts.egress, problems);
  }
  if (problems.length > before) return null;
  return { id: id as string, next_id: nextId as string, type, option };
}

/** Refuses literal URLs the egress policy forbids (loopback, private, link-local hosts, the platform itself, credentials in http URLs). */
function checkUrls(type: ActionType, option: Record<string, unknown>, at: string, index: number, egress: NonNullable<ValidateOptions['egress']>, problems: FlowProblem[]): void {
  for (const [field, value] of Object.entries(option)) {
    if (fieldContext(type, field, option) !== 'url') continue;
    for (const [f, v] of leaves(field, value)) {
      if (typeof v !== 'string' || !v || hasVariables(v)) continue;
      let url: URL;
      try {
        url = new URL(v);
      } catch {
        continue; // the option schema says what is wrong with its form
      }
      try {
        // http(s): no user:password@ either; ws(s) (external media): the host
        if (url.protocol === 'http:' || url.protocol === 'https:') egress.assertUrlSyntax(url, 'the URL');
        else egress.assertHost(url.hostname, 'the host');
      } catch (e) {
        if (!(e instanceof EgressRefused)) throw e;
        problems.push({ index, field: `${at}.${f}`, message: e.message });
      }
    }
  }
}

/** Refuses sip: destinations (connect, call...) whose host, as spelled, the egress policy forbids; `${...}` targets are checked when dialled. */
function checkSipDestinations(option: Record<string, unknown>, at: string, index: number, egress: NonNullable<ValidateOptions['egress']>, problems: FlowProblem[]): void {
  const list = option.destinations;
  if (!Array.isArray(list)) return;
  for (const [i, d] of list.entries()) {
    const dest = d as { type?: unknown; target?: unknown } | null;
    if (dest?.type !== 'sip' || typeof dest.target !== 'string' || hasVariables(dest.target)) continue;
    const r = sipLiteralRefusal(dest.target, egress);
    if (r && !r.ok) problems.push({ index, field: `${at}.destinations[${i}].target`, message: r.message });
  }
}

/** The values inside a field with their paths: array items (`f[0]`) and object members (`f.url`, connect's hold_music) walked. */
function leaves(path: string, value: unknown): [string, unknown][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => leaves(`${path}[${i}]`, v));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => leaves(`${path}.${k}`, v));
  return [[path, value]];
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = root;
  for (const k of path) {
    if (!v || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}
