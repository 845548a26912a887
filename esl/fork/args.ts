/**
 * `uuid_audio_fork`'s arguments as mod_audio_fork reads them (jambonz/freeswitch-modules, fork_function),
 * as pure functions: no channel, no socket (esl/README.md, "Audio fork").
 */

/**
 * switch_separate_string: `^^<d>` first picks the delimiter `<d>` (else a space); a '…' group is one
 * field (quotes dropped), `\` copies the next character as it is; at most `max` fields, the last
 * holding the rest. On a space, runs of spaces are one delimiter; on any other delimiter an empty
 * field between two delimiters counts, an empty one after the last does not (FreeSWITCH's tokenizer
 * stops at the end of the string). Each field is trimmed of spaces.
 */
export function separateString(data: string, max: number): string[] {
  let text = data;
  let delim = ' ';
  if (text.startsWith('^^') && text.length > 2) {
    delim = text[2]!;
    text = text.slice(3);
  }
  const out: string[] = [];
  let field: string | null = null;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (field === null) {
      if (delim === ' ' && c === ' ') continue;
      if (out.length === max - 1) {
        out.push(clean(text.slice(i)));
        return out;
      }
      field = '';
    }
    if (c === '\\' && i + 1 < text.length) field += text[++i];
    else if (c === "'" && (quoted || text.indexOf("'", i + 1) >= 0)) quoted = !quoted;
    else if (c === delim && !quoted) {
      out.push(field.trim());
      field = null;
    } else field += c;
  }
  if (field !== null) out.push(field.trim());
  return out;
}

/** The rest of the text as the last field: quotes and escapes dropped, as cleanup_separated_string does. */
function clean(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && i + 1 < s.length) out += s[++i];
    else if (s[i] !== "'") out += s[i];
  }
  return out.trim();
}

export type MixType = 'mono' | 'mixed' | 'stereo';

/** mod_audio_fork's default bug name (MY_BUG_NAME). */
export const DEFAULT_BUG = 'audio_fork';

export interface ForkStart {
  url: string;
  mix: MixType;
  /** the rate the server gets, samples per second (a multiple of 8000) */
  rate: number;
  bug: string;
  /** the text frame sent first, once connected; null: none */
  metadata: string | null;
  /**
   * What the server may send back to play (jambonz's module): `enabled` its playAudio messages (the
   * 8th argument, true unless `false`), `stream` raw binary frames (the 9th), at `streamRate` (the 10th,
   * a multiple of 8000 up to 64000; the fork's rate when empty).
   */
  bidirectional: { enabled: boolean; stream: boolean; streamRate: number };
}

/** A parsed command, or the reason it is refused (`usage`: mod_audio_fork's -USAGE answer). */
export type ForkCommand =
  | { uuid: string; op: 'start'; start: ForkStart }
  | { uuid: string; op: 'stop'; bug: string; text: string | null }
  | { uuid: string; op: 'send_text'; bug: string; text: string }
  | { uuid: string; op: 'pause' | 'resume' | 'graceful-shutdown' | 'stop_play'; bug: string }
  | { error: 'usage' | 'invalid'; reason: string };

export const FORK_SYNTAX =
  '<uuid> [start | stop | send_text | pause | resume | graceful-shutdown | stop_play ] [wss-url | path] [mono | mixed | stereo] [8000 | 16000 | 24000 | 32000 | 64000] [bugname] [metadata] [bidrectionalAduo_enabled] [bidrectionalAduo_stream_enabled] [bidrectionalAduo_stream_samplerate]';

/** switch_true: yes, on, true, t, enabled, active, allow, or a non-zero number. */
const isTrue = (s: string) => /^(yes|on|true|t|enabled|active|allow)$/i.test(s) || (/^-?\d+$/.test(s) && Number(s) !== 0);
const isJsonStart = (s: string) => s.startsWith('{') || s.startsWith('[');
/** An empty bug name is the default one (fsmrf sends '' when none is given). */
const bugOr = (s: string | undefined) => (s ? s : DEFAULT_BUG);

/** `<uuid> <op> …` as fork_function reads it (up to 10 fields). */
export function parseForkCommand(data: string): ForkCommand {
  const a = separateString(data.trim(), 10);
  const [uuid, op] = [a[0] ?? '', (a[1] ?? '').toLowerCase()];
  if (a.length < 2 || (op === 'start' && a.length < 4)) return { error: 'usage', reason: 'too few arguments' };
  switch (op) {
    case 'stop': {
      if (a.length > 3) return { uuid, op, bug: bugOr(a[2]), text: a[3]! };
      if (a.length > 2) return isJsonStart(a[2]!) ? { uuid, op, bug: DEFAULT_BUG, text: a[2]! } : { uuid, op, bug: bugOr(a[2]), text: null };
      return { uuid, op, bug: DEFAULT_BUG, text: null };
    }
    case 'send_text': {
      if (a.length < 3) return { error: 'usage', reason: 'send_text needs the text to send' };
      if (a.length > 3) return { uuid, op, bug: bugOr(a[2]), text: a[3]! };
      if (!isJsonStart(a[2]!)) return { error: 'invalid', reason: 'send_text without text' };
      return { uuid, op, bug: DEFAULT_BUG, text: a[2]! };
    }
    case 'pause':
    case 'resume':
    case 'graceful-shutdown':
      return { uuid, op, bug: bugOr(a[2]) };
    case 'stop_play':
      return { uuid, op, bug: DEFAULT_BUG };
    case 'start':
      return parseStart(uuid, a);
    default:
      return { error: 'invalid', reason: `unsupported mod_audio_fork cmd: ${op}` };
  }
}

function parseStart(uuid: string, a: string[]): ForkCommand {
  let bug = DEFAULT_BUG;
  let metadata: string | null = null;
  if (a.length > 6) {
    bug = bugOr(a[5]);
    metadata = a[6] || null;
  } else if (a.length > 5) {
    if (isJsonStart(a[5]!)) metadata = a[5]!;
    else bug = bugOr(a[5]);
  }
  const mix = a[3]!;
  if (mix !== 'mono' && mix !== 'mixed' && mix !== 'stereo') return { error: 'invalid', reason: `invalid mix type: ${mix}, must be mono, mixed, or stereo` };
  const rateText = a[4] ?? '';
  const rate = rateText === '16k' ? 16000 : rateText === '8k' ? 8000 : Number.parseInt(rateText, 10);
  if (!Number.isFinite(rate) || rate <= 0 || rate % 8000 !== 0 || rate > 64000) return { error: 'invalid', reason: `invalid sample rate: ${rateText}` };
  const streamText = a[9] ?? '';
  const streamRate = streamText ? Number.parseInt(streamText, 10) : rate;
  if (!Number.isFinite(streamRate) || streamRate <= 0 || streamRate % 8000 !== 0 || streamRate > 64000) return { error: 'invalid', reason: `invalid bidirectional audio sample rate: ${streamText}` };
  const bidirectional = { enabled: a[7] === undefined || a[7] === '' || isTrue(a[7]), stream: isTrue(a[8] ?? ''), streamRate };
  return { uuid, op: 'start', start: { url: a[2]!, mix, rate, bug, metadata, bidirectional } };
}

/** The URL as the WebSocket client dials it: ws/wss (http/https taken as them, as parse_ws_uri does); null when not one. */
export function wsUrl(text: string): URL | null {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return null;
  }
  const scheme = { 'http:': 'ws:', 'https:': 'wss:', 'ws:': 'ws:', 'wss:': 'wss:' }[u.protocol.toLowerCase()];
  if (!scheme) return null;
  if (scheme !== u.protocol) u = new URL(`${scheme}${text.slice(text.indexOf(':') + 1)}`);
  return u;
}
