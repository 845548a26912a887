/**
 * `avmd_start` / `avmd_stop` (mod_avmd): voicemail beep detection on what the channel receives, by the
 * engine's beep detector (media-engine/dsp/beep-detector.ts, `Endpoint.waitForBeep`), with mod_avmd's
 * events: `avmd::start` when it starts, `avmd::beep` once at the first beep, `avmd::stop` at
 * `avmd_stop`, and the `avmd_detect` / `avmd_total_time` variables (esl/README.md, "avmd").
 * `avmd_start` completes at once and detection goes on until `avmd_stop` or the hang-up, as
 * mod_avmd's media bug does.
 */
import type { Channel } from '../channel';
import { setVar, type AppContext } from './context';

/** One running detection on a channel. */
interface Avmd {
  /** µs since the epoch, as switch_micro_time_now */
  startUs: number;
  detected: boolean;
  /** set by avmd_stop or the hang-up: a beep that comes after is not reported */
  over: boolean;
  /** the engine's detector failed (not a cancel, not the channel gone): avmd::stop says so */
  failure: Error | null;
  /** takes its listener off the channel's hang-up signal (avmd_stop; the hang-up's own fires once) */
  unlisten: () => void;
}

/** The channel → its running detection (one at most, as mod_avmd's `_avmd_` private). Weak: a hung-up channel takes it along. */
const running = new WeakMap<Channel, Avmd>();

/** mod_avmd's option names (avmd_parse_cmd_data_one_entry). */
const OPTIONS = new Set([
  'debug',
  'report_status',
  'fast_math',
  'require_continuous_streak',
  'sample_n_continuous_streak',
  'sample_n_to_skip',
  'require_continuous_streak_amp',
  'sample_n_continuous_streak_amp',
  'simplified_estimation',
  'inbound_channel',
  'outbound_channel',
  'detection_mode',
  'detectors_n',
  'detectors_lagged_n',
]);

/** `option=value,…`: the first one that is not a known `name=value`, or null when all are. */
export function badAvmdOption(data: string): string | null {
  const items = data.trim() ? data.split(',').map((s) => s.trim()) : [];
  if (items.length > 20) return 'avmd_start takes at most 20 parameters';
  for (const item of items) {
    const [key, value, extra] = item.split('=');
    if (extra !== undefined || !key || !value) return `option ${JSON.stringify(item)} is not option=value`;
    if (!OPTIONS.has(key)) return `option ${JSON.stringify(key)} not found`;
  }
  return null;
}

/** No limit: the wait ends at avmd_stop or the hang-up, never on its own (the worker counts frames, no timer). */
const NO_TIMEOUT = Number.MAX_SAFE_INTEGER;

const nowUs = () => Date.now() * 1000;
const custom = (ctx: AppContext, subclass: string, own: [string, string][]) => ctx.fire('CUSTOM', [['Call-command', 'avmd'], ...own], { subclass });

/** The beep wait's end that is no failure: cancelled by avmd_stop, or the channel's endpoint gone with the hang-up. */
function expectedEnd(ctx: AppContext, s: Avmd, err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (ctx.signal.aborted || ctx.channel.endpoint.destroyed) return true;
  if (code === 'EDESTROYED' || code === 'ENOENDPOINT') return true; // the leg left the worker
  return code === 'ECANCELED' && s.over; // avmd_stop's stopAmd
}

export function avmdStart(ctx: AppContext, data: string): Promise<string> {
  // mod_avmd logs these and goes on without detecting; the client reads the reason in Application-Response
  if (running.has(ctx.channel)) return Promise.resolve('-ERR avmd already started');
  const bad = badAvmdOption(data);
  if (bad) return Promise.resolve(`-ERR ${bad}`);
  const ep = ctx.channel.endpoint;
  const onHangup = () => (s.over = true);
  const s: Avmd = { startUs: nowUs(), detected: false, over: false, failure: null, unlisten: () => ctx.signal.removeEventListener('abort', onHangup) };
  running.set(ctx.channel, s);
  ctx.signal.addEventListener('abort', onHangup, { once: true });
  custom(ctx, 'avmd::start', [['Start-time', String(s.startUs)]]);
  ep.waitForBeep({ timeoutMs: NO_TIMEOUT }).then(
    (hit) => {
      if (s.over) return;
      s.detected = true;
      // detected when the tone had lasted durationMs: that long after it started
      const detectionMs = hit.offsetMs + hit.durationMs;
      setVar(ctx, 'avmd_total_time', `[${Math.round(detectionMs)}]`);
      setVar(ctx, 'avmd_detect', 'TRUE');
      custom(ctx, 'avmd::beep', [
        ['Beep-Status', 'DETECTED'],
        ['Frequency', hit.frequency.toFixed(6)],
        ['Detection-time', String(Math.round(detectionMs * 1000))],
      ]);
    },
    (err: unknown) => {
      if (expectedEnd(ctx, s, err)) return;
      // the detector failed on a live channel: a fault of ours, reported, and avmd_stop will not read as NOTDETECTED
      s.failure = err instanceof Error ? err : new Error(String(err));
      ctx.failed(s.failure);
    },
  );
  return Promise.resolve('_none_');
}

export async function avmdStop(ctx: AppContext): Promise<string> {
  const s = running.get(ctx.channel);
  if (!s) return '-ERR avmd not running'; // "Stop failed - no avmd session running on this channel"
  running.delete(ctx.channel);
  s.over = true;
  s.unlisten();
  if (!s.detected && !s.failure) await ctx.channel.endpoint.stopAmd();
  const stopUs = nowUs();
  const own: [string, string][] = [['Beep-Status', s.detected ? 'DETECTED' : 'NOTDETECTED']];
  // mod_avmd's header for a detection that did not run (its "ERROR (AVMD SESSION OBJECT NOT FOUND …)")
  if (s.failure) own.push(['Stop-status', `ERROR (beep detection failed: ${s.failure.message})`]);
  own.push(['Total-time', String(stopUs - s.startUs)]);
  custom(ctx, 'avmd::stop', own);
  return s.failure ? `-ERR beep detection failed: ${s.failure.message}` : '_none_';
}
