// The mixer suites' frames (mixer-relate, mixer-whisper): a 20 ms frame of 160 samples made from a
// function of the index, a member of the mix whose input is always one frame, and the clipped sum of
// frames a listener must get sample-exact.
import type { MixMember } from '../../media-engine/worker/mixer';

/** A frame of 160 samples, sample i being f(i). */
export const ramp = (f: (i: number) => number): Int16Array => Int16Array.from({ length: 160 }, (_, i) => f(i));

/** A member whose input is `f` at every tick; heard by everyone, hearing everyone. */
export const member = (id: string, f: Int16Array): MixMember => ({ id, input: () => f, mixOut: new Int16Array(160), muteIn: false, muteOut: false, heardOnlyBy: null, notHeardBy: null });

/** The frames summed and clipped to 16 bits, as an array (what a listener's mixOut must equal). */
export const sum = (...fs: Int16Array[]): number[] =>
  Array.from({ length: 160 }, (_, i) =>
    Math.max(
      -32768,
      Math.min(
        32767,
        fs.reduce((t, f) => t + f[i]!, 0),
      ),
    ),
  );
