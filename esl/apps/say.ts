/**
 * `say` (mod_dptools' say_function over switch_ivr_say and mod_say_en):
 * `<module>[:<lang>] <type> <method> [<gender>] <text>` (fsmrf's `say(text, {sayType, sayMethod})`
 * sends `en NUMBER pronounced 123`). What mod_say_en would play (apps/say-en.ts) is spoken as words
 * through the engine's TTS: `tts_engine` / `tts_voice` when set, else espeak-ng's `en-us`.
 * `playback_terminators` stop it; `playback_seconds` / `playback_ms` are what was spoken.
 */
import { separate } from './args';
import { setVar, varOf, type AppContext } from './context';
import { sayFiles, sayMethod, sayType, wordsOf, type BrokenTime, type SayClock } from './say-en';
import { speakWith } from './speak';

/** The voice `say` speaks with when the channel names none (tts_engine, tts_voice). */
export const SAY_DEFAULT_ENGINE = 'espeak-ng';
export const SAY_DEFAULT_VOICE = 'en-us';

export async function say(ctx: AppContext, data: string): Promise<string> {
  const argv = separate(data, 5);
  // FreeSWITCH logs the usage and the application completes, nothing said
  if (argv.length !== 4 && argv.length !== 5) return '_none_';
  setVar(ctx, 'playback_terminator_used', '');
  // the module before `:` (the language after it); mod_say_en is the one say module here
  if (argv[0]!.split(':')[0]!.toLowerCase() !== 'en') return '_none_';
  const text = argv.length === 4 ? argv[3]! : argv[4]!;
  const files = sayFiles(text, sayType(argv[1]!), sayMethod(argv[2]!), sayClock(varOf(ctx, 'timezone')));
  const words = files ? wordsOf(files) : '';
  if (!words) return '_none_';
  const r = await speakWith(ctx, words, varOf(ctx, 'tts_engine') || SAY_DEFAULT_ENGINE, varOf(ctx, 'tts_voice') || SAY_DEFAULT_VOICE);
  if (r) {
    setVar(ctx, 'playback_seconds', String(Math.floor(r.playbackMilliseconds / 1000)));
    setVar(ctx, 'playback_ms', String(r.playbackMilliseconds));
  }
  return '_none_';
}

const DAY = 86_400_000;

/** Now and the channel's time zone (`timezone`, an IANA name; else the host's own), for the date and time types. */
export function sayClock(timezone: string | undefined, now = Date.now()): SayClock {
  const zone = timezone && validZone(timezone) ? timezone : undefined;
  const explode = (ms: number): BrokenTime => {
    const d = zone ? zoned(ms, zone) : new Date(ms);
    const [year, mon, mday] = zone ? [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()] : [d.getFullYear(), d.getMonth(), d.getDate()];
    return {
      year,
      mon,
      mday,
      wday: zone ? d.getUTCDay() : d.getDay(),
      yday: Math.round((Date.UTC(year, mon, mday) - Date.UTC(year, 0, 1)) / DAY),
      hour: zone ? d.getUTCHours() : d.getHours(),
      min: zone ? d.getUTCMinutes() : d.getMinutes(),
    };
  };
  const parse = (text: string): number | null => {
    const m = /^(\d{4})-(\d{1,2})-(\d{1,2})[ T](\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(text.trim());
    if (!m) return null;
    const [y, mo, d, h, mi, s] = m.slice(1).map((x) => Number(x ?? 0)) as [number, number, number, number, number, number];
    if (!zone) return new Date(y, mo - 1, d, h, mi, s).getTime();
    // the wall time read as UTC, moved by the zone's offset at that moment
    const asUtc = Date.UTC(y, mo - 1, d, h, mi, s);
    return asUtc - (zoned(asUtc, zone).getTime() - asUtc);
  };
  return { now, explode, parse };
}

/** `ms`'s wall time in `zone`, as a Date whose UTC fields hold it. */
function zoned(ms: number, zone: string): Date {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(ms);
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? 0);
  return new Date(Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')));
}

function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
