/**
 * `playback` (mod_dptools' playback_function over switch_ivr_play_file) on the channel's engine
 * endpoint: each file of the data (split on `playback_delimiter`) with PLAYBACK_START / PLAYBACK_STOP,
 * the digits in `playback_terminators` stopping it, `playback_timeout_sec`, and the playback_* variables
 * fsmrf reads from CHANNEL_EXECUTE_COMPLETE. `playFile` is also the prompt of play_and_get_digits.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { DtmfEvent } from '../../media-engine';
import { parseTeletone } from '../../media-engine';
import { playbackItems, playbackTerminators, type PlaybackItem } from './args';
import { onDigits, setVar, varOf, type AppContext } from './context';

/** How one file ended (switch_status_t of switch_ivr_play_file): played out, stopped by a digit, timed out, not there, failed, the channel gone. */
export type PlayStatus = 'done' | 'break' | 'timeout' | 'notfound' | 'error' | 'hangup';

/** The engine's play rate: the samples the playback_* variables count (8 kHz frames, whatever the file's rate). */
const RATE = 8000;

/** A local file (not a stream or URL): relative ones are under `sound_prefix` when it is set, as FreeSWITCH's. */
function localPath(ctx: AppContext, file: string): string | null {
  if (/^[a-z_]+:\/\//i.test(file)) return file.startsWith('file://') ? file.slice(7) : null;
  const prefix = varOf(ctx, 'sound_prefix');
  return prefix && !path.isAbsolute(file) ? path.join(prefix, file) : file;
}

const isFile = (p: string) =>
  stat(p).then(
    (s) => s.isFile(),
    () => false,
  );

export interface PlayFileOptions {
  /** a digit: true stops the file (status `break`) */
  digit: (e: DtmfEvent) => boolean;
  /** stop after this many ms (status `timeout`), 0 for none */
  timeoutMs: number;
  /** let the engine stop the file itself at any digit (the prompt of play_and_get_digits) */
  bargeIn?: boolean;
}

/**
 * A tone_stream FreeSWITCH would play as asked: a teletone script (mod_tone_stream, libteletone), which
 * media-engine reads too. The engine's own names (`tone_stream://beep`, `ringback`, `dtmf:…`) are not
 * FreeSWITCH's: libteletone reads their letters as entries of its tone map (a DTMF tone or nothing), never a
 * beep, so the switch does not play them (as the room's playback: conference/playback.ts).
 */
function teletone(file: string): boolean {
  try {
    parseTeletone(file.slice('tone_stream://'.length));
    return true;
  } catch {
    return false;
  }
}

/** One file as switch_ivr_play_file plays it: PLAYBACK_START, the audio, the playback_* variables, PLAYBACK_STOP. */
export async function playFile(ctx: AppContext, item: PlaybackItem, opts: PlayFileOptions): Promise<PlayStatus> {
  const local = localPath(ctx, item.file);
  if (local !== null && !(await isFile(local))) return 'notfound';
  if (/^tone_stream:\/\//i.test(item.file) && !teletone(item.file)) return 'notfound';
  if (ctx.signal.aborted) return 'hangup';
  const ep = ctx.channel.endpoint;
  const type: [string, string][] = /^tone_stream:/i.test(item.file) ? [['Playback-File-Type', 'tone_stream']] : [];
  ctx.fire('PLAYBACK_START', [...type, ['Playback-File-Path', item.file]]);
  let ended: 'break' | 'timeout' | null = null;
  const stop = (why: 'break' | 'timeout') => {
    if (ended) return;
    ended = why;
    void ep.stopPlayback().catch(() => undefined);
  };
  const release = onDigits(ctx, (e) => {
    if (opts.digit(e)) stop('break');
  });
  // the file's timer, owned by this play: cancelled when it ends
  const timer = opts.timeoutMs > 0 ? setTimeout(() => stop('timeout'), opts.timeoutMs) : null;
  let status: PlayStatus;
  let samples = 0;
  try {
    const spec = local ?? item.file;
    const r = await ep.play(item.seek > 0 ? { file: spec, seekSamples: item.seek } : spec, { bargeIn: opts.bargeIn });
    samples = Math.round((r.playbackMilliseconds * RATE) / 1000);
    status = ctx.signal.aborted ? 'hangup' : (ended ?? (r.interrupted ? 'break' : 'done'));
  } catch (e) {
    status = ctx.signal.aborted ? 'hangup' : /File Not Found/.test((e as Error).message) ? 'notfound' : 'error';
  } finally {
    release();
    if (timer) clearTimeout(timer);
  }
  setVar(ctx, 'playback_last_offset_pos', String(item.seek + samples));
  setVar(ctx, 'playback_seconds', String(Math.floor(samples / RATE)));
  setVar(ctx, 'playback_ms', String(Math.floor(samples / (RATE / 1000))));
  setVar(ctx, 'playback_samples', String(samples));
  ctx.fire('PLAYBACK_STOP', [...type, ['Playback-File-Path', item.file], ['Playback-Status', status === 'break' ? 'break' : 'done']]);
  return status;
}

/** `playback_timeout_sec` (more than 1, as FreeSWITCH reads it) in ms; 0 for none. */
export function playbackTimeoutMs(ctx: AppContext): number {
  const n = Number.parseInt(varOf(ctx, 'playback_timeout_sec') ?? '', 10);
  return n > 1 ? n * 1000 : 0;
}

/** The files of one play_file call, one after another: a digit, the timeout or the channel going stops the rest; a missing file is skipped. */
export async function playFiles(ctx: AppContext, data: string, digit: (e: DtmfEvent) => boolean, bargeIn = false): Promise<PlayStatus> {
  const items = playbackItems(data, varOf(ctx, 'playback_delimiter'));
  if (items.length === 0) return 'error';
  const deadline = playbackTimeoutMs(ctx);
  const started = Date.now();
  let status: PlayStatus = 'done';
  for (const item of items) {
    const left = deadline ? Math.max(1, deadline - (Date.now() - started)) : 0;
    status = await playFile(ctx, item, { digit, timeoutMs: left, bargeIn });
    if (status !== 'done' && status !== 'notfound') break;
  }
  return status;
}

/** playback_function: FILE PLAYED (played out or stopped by a terminator), FILE NOT FOUND, PLAYBACK ERROR (a timeout too, unless playback_timeout_as_success). */
export async function playback(ctx: AppContext, data: string): Promise<string> {
  setVar(ctx, 'playback_terminator_used', '');
  const terminators = playbackTerminators(varOf(ctx, 'playback_terminators'));
  const status = await playFiles(ctx, data, (e) => {
    if (!terminators.includes(e.dtmf)) return false;
    setVar(ctx, 'playback_terminator_used', e.dtmf);
    return true;
  });
  if (status === 'timeout' && /^(true|yes|on|1)$/i.test(varOf(ctx, 'playback_timeout_as_success') ?? '')) return 'FILE PLAYED';
  if (status === 'done' || status === 'break') return 'FILE PLAYED';
  return status === 'notfound' ? 'FILE NOT FOUND' : 'PLAYBACK ERROR';
}
