/**
 * The channel applications this switch serves (mod_dptools' names), one table: sip-face.ts runs the
 * one sendmsg names, or hangs the channel up when it is not here (FreeSWITCH: an application no module
 * registered). `hangup` is the channel's own (it ends the call), not an entry.
 */
import { multisetPairs, setMuteArgs, setPair } from './args';
import { avmdStart, avmdStop } from './avmd';
import { playAndGetDigits } from './collect';
import { conference } from './conference';
import { setVar, type App, type AppContext } from './context';
import { playback } from './playback';
import { record, recordSession, stopRecordSession } from './record';
import { say } from './say';
import { speak } from './speak';

export { AppRefused } from './context';
export type { App, AppContext } from './context';

/** base_set: `name=value`, or `name` / `name=` to unset. */
function set(ctx: AppContext, datum: string): void {
  const p = setPair(datum);
  if (p) setVar(ctx, p[0], p[1]);
}

export const APPS: Readonly<Record<string, App>> = {
  // the channel is answered when the outbound socket connects
  answer: () => Promise.resolve('_none_'),
  set: (ctx, data) => (set(ctx, data), Promise.resolve('_none_')),
  // one switch, no bridged legs: export is set on this channel
  export: (ctx, data) => (set(ctx, data), Promise.resolve('_none_')),
  unset: (ctx, data) => (set(ctx, data.split('=')[0]!), Promise.resolve('_none_')),
  multiset: (ctx, data) => {
    for (const datum of multisetPairs(data)) set(ctx, datum);
    return Promise.resolve('_none_');
  },
  set_mute: async (ctx, data) => {
    const m = setMuteArgs(data);
    if (m) await ctx.channel.endpoint[m.on ? 'mute' : 'unmute'](m.direction);
    return '_none_';
  },
  playback,
  play_and_get_digits: playAndGetDigits,
  record,
  record_session: recordSession,
  stop_record_session: stopRecordSession,
  speak,
  avmd_start: avmdStart,
  avmd_stop: avmdStop,
  say,
  // the engine detects in-band digits on every channel from its start (DTMF-Source INBAND_AUDIO): nothing to start
  start_dtmf: () => Promise.resolve('_none_'),
  conference,
};

/** The application named `name` (case as sent: FreeSWITCH's names are lower case), or undefined. */
export const appFor = (name: string): App | undefined => (Object.hasOwn(APPS, name) ? APPS[name] : undefined);
