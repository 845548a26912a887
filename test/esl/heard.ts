// What a far end heard, 20 ms frame by 20 ms frame (8 kHz), for checks of a change (a mute, a deaf, a
// stop) that must hold from the frame the change reached the ear on, not over a second that still holds
// what was in flight. In flight is at most what the far end's jitter buffer held when its recording
// began (its target frames, one more by the phase of the tick) and, should the frame after the last of
// them be lost, its concealment: the last frame repeated fading over 3 frames.
import { expect } from 'chai';
import type { Endpoint } from '../../media-engine';
import { rms } from '../../testkit/media-engine/support';
import { toneShare } from '../../testkit/media-engine/far-end';

const FRAME = 160;
/** a frame under this RMS is silence (a tone at half scale is ~11600) */
const SILENT = 100;

/** Per 20 ms frame of `x`: whether it holds the tone of `hz` (over a fifth of a frame that is not silence). */
export function toneFrames(x: Int16Array, hz: number): boolean[] {
  const out: boolean[] = [];
  for (let i = 0; i + FRAME <= x.length; i += FRAME) out.push(rms(x, i, i + FRAME) > SILENT && toneShare(x.subarray(i, i + FRAME), hz, 8000) > 0.2);
  return out;
}

/** Per 20 ms frame of `x`: whether it is not silence. */
export function loudFrames(x: Int16Array): boolean[] {
  const out: boolean[] = [];
  for (let i = 0; i + FRAME <= x.length; i += FRAME) out.push(rms(x, i, i + FRAME) > SILENT);
  return out;
}

/** The frames in flight when a recording began, at most: its far end's jitter buffer, and the fade of a loss after it. */
export const inFlightFrames = (jitterTargetFrames: number) => jitterTargetFrames + 1 + 3;

/**
 * How many leading frames of `frames` (a per-frame test of what was heard after a change) it takes to
 * hold every frame where the test holds: 0 when none does. "Gone after the change": at most the frames
 * that can be in flight. Not the first run where it holds: what was in flight may itself have a gap (a
 * frame concealed or late, a loop of a file restarting) and its frames after the gap are in flight too.
 */
export function framesThroughLast(frames: boolean[]): number {
  return frames.lastIndexOf(true) + 1;
}

/**
 * `frames` (a per-frame test of what `peer` heard after a change) hold only within the leading frames in
 * flight when the change came, never after them: the change reached the ear on the first frame it could.
 */
export async function expectGoneAfterFlight(frames: boolean[], peer: Endpoint, what: string): Promise<void> {
  expectGoneWithin(frames, inFlightFrames((await peer.getStats()).jitterTargetFrames), what);
}

/** `frames` hold in none after the first `flight`. */
export function expectGoneWithin(frames: boolean[], flight: number, what: string): void {
  const seen = frames.map((f) => (f ? '1' : '0')).join('');
  expect(framesThroughLast(frames), `${what} heard only in the frames in flight, at most ${flight} (by frame: ${seen})`).to.be.at.most(flight);
}
