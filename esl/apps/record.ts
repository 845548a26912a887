/**
 * `record` (switch_ivr_record_file), `record_session` and `stop_record_session` (switch_ivr_async's
 * media bug) on the channel's engine endpoint: a 16-bit mono WAV at the leg's rate, RECORD_START /
 * RECORD_STOP with Record-File-Path, and the record_* variables. `record` blocks the channel until a
 * terminator (`playback_terminators`), the time limit or the silence limit; `record_session` returns
 * at once and records until stopped, its limit, or the hang-up.
 */
import path from 'node:path';
import type { RecordResult } from '../../media-engine';
import { playbackTerminators, recordArgs, recordSessionArgs } from './args';
import { AppRefused, setVar, varOf, type AppContext } from './context';

/** A path the engine can write as FreeSWITCH would open it: absolute, a `.wav` (the one format written here). */
const writable = (p: string) => path.isAbsolute(p) && /\.wav$/i.test(p);

/** The record_* variables of a finished recording (samples at the file's rate). */
function recordVars(channel: AppContext['channel'], r: RecordResult): void {
  const samples = Math.round((r.recordMilliseconds * r.rate) / 1000);
  channel.variables.set('record_samples', String(samples));
  channel.variables.set('record_seconds', String(Math.floor(samples / r.rate)));
  channel.variables.set('record_ms', String(Math.floor(samples / (r.rate / 1000))));
}

/** The file the `record` app is writing on a channel (its engine endpoint), while it runs. */
const recording = new WeakMap<object, string>();

/**
 * uuid_break on a channel: a running `record` app ends (FreeSWITCH's record_file returns on CF_BREAK,
 * its file kept, as after a terminator); record_session's recordings (media bugs) go on.
 */
export async function breakRecord(endpoint: AppContext['channel']['endpoint']): Promise<void> {
  const file = recording.get(endpoint);
  if (file) await endpoint.stopRecord(file);
}

/** record_function: `<path> [time_limit_secs] [silence_thresh] [silence_hits]`. */
export async function record(ctx: AppContext, data: string): Promise<string> {
  const a = recordArgs(data);
  if (!a) return '_none_'; // "No file specified": the application returns
  if (!writable(a.path)) throw new AppRefused(`record: cannot write ${a.path}`);
  setVar(ctx, 'playback_terminator_used', '');
  setVar(ctx, 'silence_hits_exhausted', 'false');
  ctx.fire('RECORD_START', [['Record-File-Path', a.path]]);
  const ep = ctx.channel.endpoint;
  recording.set(ep, a.path);
  const r = await ep
    .record(a.path, {
      duration: a.limitSecs,
      end_of_silence: a.silenceSecs,
      silenceThreshold: a.silenceThresh || undefined,
      end_of_key: playbackTerminators(varOf(ctx, 'playback_terminators')),
    })
    .finally(() => recording.delete(ep));
  if (r.terminatorUsed) setVar(ctx, 'playback_terminator_used', r.terminatorUsed);
  if (r.reason === 'end_of_silence') setVar(ctx, 'silence_hits_exhausted', 'true');
  recordVars(ctx.channel, r);
  ctx.fire('RECORD_STOP', [['Record-File-Path', a.path]]);
  return '_none_';
}

/** The record_session recordings (media bugs) running on each channel's engine endpoint, by path. */
const sessions = new WeakMap<object, Set<string>>();

/** What starting or stopping a session recording needs of its channel: the `record_session` app's context, or the uuid_record API's channel. */
export interface SessionRecordHost {
  readonly channel: AppContext['channel'];
  fire(name: 'RECORD_START' | 'RECORD_STOP', own: [string, string][]): void;
}

/**
 * switch_ivr_record_session: `p` recorded on the channel until stopped, its limit (s, 0: none) or the
 * hang-up; resolves once the recorder is armed (RECORD_START), RECORD_STOP with the record_* variables
 * when it ends. False when the file cannot be written (the media bug fails to open it).
 */
export async function startSessionRecord(host: SessionRecordHost, p: string, limitSecs: number): Promise<boolean> {
  if (!writable(p)) return false;
  const ep = host.channel.endpoint;
  const rec = await ep.startRecord(p, { duration: limitSecs });
  let running = sessions.get(ep);
  if (!running) sessions.set(ep, (running = new Set()));
  running.add(p);
  host.fire('RECORD_START', [['Record-File-Path', p]]);
  const ended = () => {
    running.delete(p);
    host.fire('RECORD_STOP', [['Record-File-Path', p]]);
  };
  void rec.done.then((r) => {
    recordVars(host.channel, r);
    ended();
  }, ended);
  return true;
}

/**
 * switch_ivr_stop_record_session: the channel's session recording `which` (every one for `all`) ends,
 * each with its RECORD_STOP; false when none such runs. A `record` app's file is not one of them.
 */
export async function stopSessionRecord(channel: AppContext['channel'], which: string): Promise<boolean> {
  const running = sessions.get(channel.endpoint);
  const paths = [...(running ?? [])].filter((p) => which.toLowerCase() === 'all' || p === which);
  for (const p of paths) await channel.endpoint.stopRecord(p);
  return paths.length > 0;
}

/** record_session: `<path> [+<limit secs>] [{vars}]`; done once the recorder is armed, RECORD_STOP when it ends. */
export async function recordSession(ctx: AppContext, data: string): Promise<string> {
  const a = recordSessionArgs(data);
  // a file it cannot write: the media bug fails to open it, the call goes on (switch_ivr_record_session)
  if (a) await startSessionRecord(ctx, a.path, a.limitSecs);
  return '_none_';
}

/** stop_record_session: `<path>` or `all`. */
export async function stopRecordSession(ctx: AppContext, data: string): Promise<string> {
  const which = data.trim();
  if (which) await stopSessionRecord(ctx.channel, which);
  return '_none_';
}
