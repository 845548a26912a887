/**
 * A caller on a number that already exists (its VoiceUrl set through the official `twilio` client):
 * sipp through the customer's trunk, its RTP from an RtpPeer that talks a 700 Hz PCMU tone (the
 * peer's `amplitude` 0 sends silence) and measures what it hears. The sipp trace tells when the
 * platform's BYE arrived.
 */
import { killAllSipp, sipp, uacWaitsForBye, until, type SippResult } from '../media-app/harness';
import { RtpPeer, type Stack } from '../streams/support';
import type { CallSession } from '../../media-app/call/session';

export interface NumberCall {
  peer: RtpPeer;
  live: CallSession;
  sipp: Promise<SippResult>;
}

/** Calls `number`; resolves once the call is progressing with an endpoint and the peer talks to it (at `amplitude`). */
export async function callNumber(stack: Stack, number: string, opts: { amplitude?: number; byeTimeoutMs?: number } = {}): Promise<NumberCall> {
  const peer = await RtpPeer.open();
  peer.amplitude = opts.amplitude ?? 0;
  const sipPort = stack.platform.sipPort;
  let taken: CallSession | null = null;
  const stopWatching = stack.platform.app.calls.onAdded((c) => {
    if ((c as CallSession).row.destination.target === number) taken = c as CallSession;
  });
  const byeTimeoutMs = opts.byeTimeoutMs ?? 90_000;
  const run = sipp(
    uacWaitsForBye(`${number}@127.0.0.1:${sipPort}`, '+15551230000', peer.port, { byeTimeoutMs }),
    [`127.0.0.1:${sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', `${Math.ceil(byeTimeoutMs / 1000) + 10}s`],
    {
      killAfterMs: byeTimeoutMs + 15_000,
    },
  );
  let exited: SippResult | null = null;
  void run.done.then((r) => (exited = r));
  try {
    const live = await until(
      () => {
        const r = exited as SippResult | null;
        if (r) throw new Error(`sipp ended (exit ${r.code}) before the call progressed: ${(r.errors || r.stderr).trim().slice(0, 400)}`);
        const c = taken as CallSession | null;
        return c && c.status === 'progressing' && c.endpoint ? c : null;
      },
      30_000,
      'call progressing with an endpoint',
    );
    peer.talk(live.endpoint!.local.port);
    return { peer, live, sipp: run.done };
  } catch (e) {
    peer.close();
    killAllSipp();
    throw e;
  } finally {
    stopWatching();
  }
}

/** When (ms since the epoch) sipp's trace shows the first BYE request it received. */
export function byeReceivedAt(messages: string): number | null {
  // a trace block: "----- 2026-11-24\t07:01:02.123456 1764...\nUDP message received [n] bytes :\n\nBYE sip:…"
  for (const block of messages.split(/^-{20,}\s*/m)) {
    if (!/message received/.test(block) || !/^BYE sip:/m.test(block)) continue;
    const m = /^(\d{4}-\d{2}-\d{2})\s+(\d{2}:\d{2}:\d{2})\.(\d{3})\d*/.exec(block);
    if (!m) return null;
    return new Date(`${m[1]}T${m[2]}.${m[3]}`).getTime();
  }
  return null;
}
