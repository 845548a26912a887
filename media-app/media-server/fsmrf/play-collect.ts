/**
 * A leg's playCollect on the switch (FsmrfCallEndpoint.playCollect): `play_and_get_digits` with its
 * files (an http(s) one fetched by media-app into the directory shared with the switch, as play's:
 * switch-files.ts), a `say` prompt refused (the switch takes a file). Every argument goes through eslArg
 * first; the leg's refusal of a prompt while it is in a switch room (room-app.ts) is read before anything
 * is fetched and again in the step that sends.
 */
import type { Endpoint as FsEndpoint } from 'drachtio-fsmrf';
import type { PlayCollectOptions, PlayCollectResult } from '../../../media-engine';
import { MediaBackendUnsupported } from '../port';
import { eslArg } from './esl-arg';
import type { SharedPrompts } from './shared-prompts';
import { withSwitchFiles } from './switch-files';

/** A string of the switch's playback_* variables as a number (0 when absent). */
const num = (v: string | null | undefined): number => (v ? Number(v) || 0 : 0);

/** What playCollect needs of its leg. */
export interface CollectingLeg {
  readonly fs: FsEndpoint;
  readonly prompts: SharedPrompts | null;
  /** the leg's operations under its channel socket (leg-socket.ts) */
  run<T>(operation: string, op: () => Promise<T>): Promise<T>;
  /** throws when a prompt sent now would not be played (room-app.ts) */
  assertPromptable(): void;
}

export async function playCollectOn(leg: CollectingLeg, opts: PlayCollectOptions): Promise<PlayCollectResult> {
  if (opts.say) throw new MediaBackendUnsupported('fsmrf', 'a spoken prompt while collecting digits (play_and_get_digits takes a file)');
  const given = (Array.isArray(opts.file) ? opts.file : [opts.file ?? 'silence_stream://1']).map((f) => eslArg('playCollect file', f));
  const regexp = opts.regexp instanceof RegExp ? opts.regexp.source : opts.regexp;
  if (regexp) eslArg('playCollect regexp', regexp);
  if (opts.invalidFile) eslArg('playCollect invalidFile', opts.invalidFile);
  if (opts.terminators) eslArg('playCollect terminators', opts.terminators);
  leg.assertPromptable(); // before fetching anything; again in the send's step
  return withSwitchFiles(leg.prompts, 'playCollect', [given, opts.invalidFile ? [opts.invalidFile] : []], async ([files, invalid]) => {
    const file = eslArg('playCollect file', files!.join('!'));
    const invalidFile = invalid![0];
    leg.assertPromptable();
    const r = await leg.run('playCollect', () =>
      leg.fs.playCollect({
        file,
        min: opts.min ?? 1,
        max: opts.max ?? 128,
        tries: opts.tries ?? 1,
        timeout: opts.timeout ?? 5000,
        digitTimeout: opts.digitTimeout ?? opts.timeout ?? 5000,
        terminators: opts.terminators ?? '#',
        ...(invalidFile ? { invalidFile } : {}),
        ...(regexp ? { regexp } : {}),
      }),
    );
    return { digits: r.digits ?? '', terminatorUsed: r.terminatorUsed || null, playbackSeconds: num(r.playbackSeconds), playbackMilliseconds: num(r.playbackMilliseconds) };
  });
}
