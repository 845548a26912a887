/**
 * What the Media Streams bench (media-streams.ts) asks of the platform in its own process
 * (scripts/bench/ai/platform-process.ts `serve`): the live call of a number once it progresses (its id
 * and the RTP port the caller talks to), the node's threads (for their CPU in /proc) and the node's
 * event-loop delay. Loaded in the platform's process only.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Platform } from '../../../testkit/media-app/harness';
import type { CallSession } from '../../../media-app/call/session';

export type PlatformAsk = { op: 'call'; number: string; timeoutMs: number } | { op: 'threads' } | { op: 'loop'; reset: boolean };

export interface LiveCall {
  callId: string;
  rtpPort: number;
}

export interface Threads {
  pid: number;
  workerTids: number[];
}

/** The node's event-loop delay since the last reset, ms. */
export interface LoopDelay {
  p50: number;
  p99: number;
  max: number;
}

export function serve(platform: Platform): (body: unknown) => Promise<unknown> {
  // the live calls by the number called, as the node takes them (no polling of the database per call)
  const byNumber = new Map<string, CallSession>();
  platform.app.calls.onAdded((c) => {
    const call = c as CallSession;
    byNumber.set(call.row.destination.target, call);
    void call.done.then(() => byNumber.delete(call.row.destination.target));
  });
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const ms = (ns: number) => Math.round(ns / 1e4) / 100;

  async function liveCall(number: string, timeoutMs: number): Promise<LiveCall> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const c = byNumber.get(number);
      if (c && c.status === 'progressing' && c.endpoint) return { callId: c.id, rtpPort: c.endpoint.local.port };
      if (Date.now() > until) throw new Error(`no progressing call to ${number} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  return async (body) => {
    const ask = body as PlatformAsk;
    if (ask.op === 'call') return liveCall(ask.number, ask.timeoutMs);
    if (ask.op === 'threads') return { pid: process.pid, workerTids: platform.engine().workerTids.filter((t): t is number => t !== undefined) } satisfies Threads;
    const d: LoopDelay = { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max) };
    if (ask.reset) loop.reset();
    return d;
  };
}
