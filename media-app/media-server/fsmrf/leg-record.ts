/**
 * A leg's `record` (FsmrfCallEndpoint.record): the switch's `record` application on the leg's channel,
 * `<path> <limit secs> <silence thresh> <silence secs>`, after `playback_terminators` is set to the keys
 * that end it. It records what the far end sends until the time limit, the silence limit, one of
 * `end_of_key` or stopRecord (uuid_break); the reason is read back from the record_* / terminator
 * variables of its CHANNEL_EXECUTE_COMPLETE.
 */
import type { Endpoint as FsEndpoint } from 'drachtio-fsmrf';
import type { RecordOptions, RecordResult } from '../../../media-engine';
import { MediaBackendUnsupported } from '../port';
import { eslArg } from './esl-arg';
import { channelHeader } from './leg-socket';

/** The leg's channel socket's run (LegSocket.run): what is pending rejects when that socket ends. */
type Run = <T>(operation: string, op: () => Promise<T>) => Promise<T>;

/** A string of the switch's record_* variables as a number (0 when absent). */
const num = (v: string | null): number => (v ? Number(v) || 0 : 0);

/** Records `path` on `fs`'s channel through `run`; bad input (a CR/LF/NUL, a separate-files ask) rejects before anything is sent. */
export async function recordOn(fs: FsEndpoint, run: Run, path: string, opts: RecordOptions = {}): Promise<RecordResult> {
  const file = eslArg('record file', path);
  const keys = eslArg('record end_of_key', opts.end_of_key ?? '');
  if (opts.separate) throw new MediaBackendUnsupported('fsmrf', 'recording each direction to its own file');
  await run('record', () => fs.execute('set', `playback_terminators=${keys || 'none'}`));
  const silence = opts.end_of_silence && opts.end_of_silence > 0 ? ` ${opts.silenceThreshold ?? 200} ${opts.end_of_silence}` : '';
  const limit = opts.duration && opts.duration > 0 ? opts.duration : 0;
  const done = await run('record', () => fs.execute('record', `${file} ${limit}${silence}`));
  const ms = num(channelHeader(done, 'variable_record_ms'));
  const key = channelHeader(done, 'variable_playback_terminator_used') || null;
  const reason = key ? 'end_of_key' : channelHeader(done, 'variable_silence_hits_exhausted') === 'true' ? 'end_of_silence' : limit && ms >= limit * 1000 - 100 ? 'duration' : 'stopped';
  return { path, reason, terminatorUsed: key, recordSeconds: Math.floor(ms / 1000), recordMilliseconds: ms, rate: 8000, files: [] };
}
