/**
 * The send-time error of a forwarded pair (Opus↔Opus, peer.ts with `relay`): the engine sends each packet
 * on as it came, so its error is measured from when the far end sent the packet it carries, not on the
 * 20 ms grid (which would count the far end's own late sends as the engine's).
 */
import { LOOP_FRAMES } from './codec-tone';

/**
 * How far an arrival may seem to come before the send it carries: the arrival is the kernel's stamp brought
 * onto performance.now()'s clock, the send is read from that clock after the call, and a relay that sends on
 * as a packet arrives takes well under a millisecond, so the two can cross by a little (never by a loop).
 */
export const CLOCK_SLACK_MS = 5;

/**
 * A relayed leg's errors: each packet's delay from the send of the source packet it carries (the latest
 * one of its loop place sent before it arrived, within CLOCK_SLACK_MS), less the leg's least delay. `sent`:
 * the source leg's send times, in order.
 */
export function relayErrors(leg: { arrivals: number[]; loopIdx: number[] }, sent: number[], loopLength = LOOP_FRAMES): number[] {
  const delays: number[] = [];
  for (let k = 0; k < leg.arrivals.length; k++) {
    const j = leg.loopIdx[k]!;
    const a = leg.arrivals[k]! + CLOCK_SLACK_MS;
    if (j < 0) continue;
    // the last packet sent before the arrival, then back to the one of loop place j
    let lo = 0;
    let hi = sent.length - 1;
    if (hi < 0 || sent[0]! > a) continue;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (sent[mid]! <= a) lo = mid;
      else hi = mid - 1;
    }
    const n = lo - ((((lo - j) % loopLength) + loopLength) % loopLength);
    if (n >= 0) delays.push(a - CLOCK_SLACK_MS - sent[n]!);
  }
  const least = Math.min(...delays);
  return delays.map((d) => d - least);
}
