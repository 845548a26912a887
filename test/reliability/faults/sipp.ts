/** sipp scenarios and helpers the fault tests share (the harness's sipp runner does the running). */
import { sipp, uacWaitsForBye, type SippResult } from '../../../testkit/media-app/harness';
import { sippMediaPort } from '../../../testkit/ports';

/** A caller that answers nothing itself: INVITE (audio to `rtpPort`), ACK, waits `holdMs`, sends BYE. */
export function callerHangsUp(ruri: string, rtpPort: number, holdMs: number): string {
  return uacWaitsForBye(ruri, '+15550001111', rtpPort, { hangUpAfterMs: holdMs });
}

/** One sipp call (-m 1) to the platform at `sipPort`, with its own media port block. */
export async function oneCall(scenario: string, sipPort: number, timeoutMs: number): Promise<SippResult> {
  const mp = await sippMediaPort();
  const secs = Math.ceil(timeoutMs / 1000);
  return sipp(scenario, [`127.0.0.1:${sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mp', String(mp), '-timeout', `${secs}s`], { killAfterMs: timeoutMs + 5000 }).done;
}

/** Inter-arrival gaps (ms) of packets that arrived between `from` and `to` (performance.now() times). */
export function gapsBetween(times: number[], from: number, to: number): number[] {
  const inWindow = times.filter((t) => t >= from && t <= to);
  const gaps: number[] = [];
  for (let i = 1; i < inWindow.length; i++) gaps.push(inWindow[i]! - inWindow[i - 1]!);
  return gaps;
}

export function percentile(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
