/**
 * The application arguments and channel-variable values as mod_dptools reads them, as pure functions:
 * no channel, no engine (esl/README.md, "Channel applications").
 */

/** switch_separate_string on spaces: words, a '…' group kept whole (quotes dropped), runs of spaces as one. */
export function splitArgs(data: string): string[] {
  const out: string[] = [];
  const re = /'([^']*)'|(\S+)/g;
  for (let m = re.exec(data); m; m = re.exec(data)) out.push(m[1] ?? m[2]!);
  return out;
}

const int = (s: string | undefined, dflt: number) => {
  const n = Number.parseInt(s ?? '', 10);
  return Number.isFinite(n) ? n : dflt;
};

/** `playback` data: the files (split on `playback_delimiter`, when set) and each one's `@@<samples>` seek. */
export interface PlaybackItem {
  file: string;
  /** samples to skip from the start (`file@@N`), 0 without */
  seek: number;
}

export function playbackItems(data: string, delimiter: string | undefined): PlaybackItem[] {
  const parts = delimiter && delimiter.length === 1 ? data.split(delimiter) : [data];
  return parts
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => {
      const at = p.indexOf('@@');
      if (at < 0) return { file: p, seek: 0 };
      return { file: p.slice(0, at), seek: Math.max(0, int(p.slice(at + 2), 0)) };
    });
}

/** `playback_terminators` (on_dtmf): the digits that stop a playback or a record; default `*`, `any`, `none`. */
export function playbackTerminators(v: string | undefined): string {
  if (v === undefined) return '*';
  if (v.toLowerCase() === 'any') return '1234567890*#';
  if (v.toLowerCase() === 'none') return '';
  return v;
}

/** play_and_get_digits `<min> <max> <tries> <timeout ms> <terminators> <file> <invalid_file> <var_name> <regexp> <digit_timeout ms>`. */
export interface CollectArgs {
  min: number;
  max: number;
  tries: number;
  timeoutMs: number;
  digitTimeoutMs: number;
  terminators: string;
  file: string;
  invalidFile: string;
  varName: string;
  regexp: string;
}

/** As play_and_get_digits_function and switch_ivr_read clamp them: max ≥ min, timeout ≥ 1000 ms, `#` when no terminators, digit timeout = timeout when 0. */
export function collectArgs(data: string): CollectArgs | null {
  const a = splitArgs(data);
  if (a.length === 0) return null;
  const min = Math.max(0, int(a[0], 0));
  const max = Math.min(128, Math.max(min, int(a[1], 0)));
  const timeoutMs = Math.max(1000, int(a[3], 1000));
  const digitTimeout = Math.max(0, int(a[9], 0));
  return {
    min,
    max,
    tries: Math.max(0, int(a[2], 0)),
    timeoutMs,
    digitTimeoutMs: digitTimeout || timeoutMs,
    terminators: a[4] || '#',
    file: a[5] ?? '',
    invalidFile: a[6] ?? '',
    varName: a[7] ?? '',
    regexp: a[8] ?? '',
  };
}

/** record `<path> [+]<time_limit_secs> <silence_thresh> <silence_hits>`. */
export interface RecordArgs {
  path: string;
  limitSecs: number;
  /** mean |sample| of a 20 ms frame under which it counts as silent (0: no silence detection) */
  silenceThresh: number;
  /** seconds of consecutive silence that end the recording (switch_ivr_record_file: 3 when 0) */
  silenceSecs: number;
}

export function recordArgs(data: string): RecordArgs | null {
  const a = splitArgs(data);
  if (!a[0]) return null;
  const thresh = Math.max(0, int(a[2], 0));
  return { path: a[0], limitSecs: Math.max(0, int(a[1]?.replace(/^\+/, ''), 0)), silenceThresh: thresh, silenceSecs: thresh ? Math.max(0, int(a[3], 0)) || 3 : 0 };
}

/** record_session `<path> [+<limit secs>] [{var=value,…}]` (the variables are not read). */
export function recordSessionArgs(data: string): { path: string; limitSecs: number } | null {
  const a = data.trim().split(/\s+/).filter(Boolean);
  if (!a[0]) return null;
  return { path: a[0], limitSecs: a[1]?.startsWith('+') ? Math.max(0, int(a[1].slice(1), 0)) : 0 };
}

/** set_mute `<read|write> <true|false|level>`: null unless both words are there. */
export function setMuteArgs(data: string): { direction: 'in' | 'out'; on: boolean } | null {
  const a = data.trim().split(/\s+/);
  if (a.length !== 2) return null;
  const which = a[0]!.toLowerCase();
  if (which !== 'read' && which !== 'write') return null;
  const level = int(a[1], 0);
  return { direction: which === 'read' ? 'in' : 'out', on: level > 0 || /^(true|yes|on|enabled|active|allow)$/i.test(a[1]!) };
}

/** One `set` datum: `name=value` sets, `name` or `name=` unsets (base_set). */
export function setPair(datum: string): [string, string | null] | null {
  const eq = datum.indexOf('=');
  const name = (eq < 0 ? datum : datum.slice(0, eq)).trim();
  if (!name) return null;
  const value = eq < 0 ? '' : datum.slice(eq + 1);
  return [name, value === '' ? null : value];
}

/** multiset's data: `^^<d>` picks the delimiter `<d>`, else a space. */
export function multisetPairs(data: string): string[] {
  if (data.startsWith('^^') && data.length > 2) return data.slice(3).split(data[2]!).filter(Boolean);
  return data.split(' ').filter(Boolean);
}

/**
 * switch_separate_string on ' ': words split at runs of blanks, at most `max`, the last one keeping
 * the rest of the line (blanks included).
 */
export function separate(text: string, max: number): string[] {
  const out: string[] = [];
  let rest = text.replace(/^\s+/, '');
  while (rest && out.length < max - 1) {
    const m = /\s+/.exec(rest);
    if (!m) break;
    out.push(rest.slice(0, m.index));
    rest = rest.slice(m.index + m[0].length);
  }
  if (rest) out.push(rest);
  return out;
}
