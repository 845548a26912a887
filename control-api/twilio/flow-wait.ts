/**
 * A Calls redirect (`Url`/`Twiml`) right after the answer (issue 54). media-app writes the answer
 * (progressing: Twilio's in-progress) and then starts the call's flow and writes its activeflow_id
 * (media-app/call/factory.ts runOutgoing → runFlow): in between, the call is in progress with no flow to
 * redirect yet. Twilio never refuses a redirect of an in-progress call, so the request waits for the
 * flow: it re-reads the row until the flow is written, the call leaves progressing, the client goes, or
 * TWILIO_REDIRECT_WAIT_MS after the answer has passed (a call answered that long ago with no flow has
 * none coming: a connect leg). The wait and its timers are the request's own. media-app stays the one
 * writer of the row's activeflow_id; this only reads it.
 */
import type { Response } from 'express';
import { setTimeout as delay } from 'node:timers/promises';
import type { AppContext } from '../context';
import { clock } from '../../core/clock';
import { EMPTY_UUID } from '../../core/ids';
import { platformMetrics } from '../../core/metrics';
import { callsRepo, type CallRow } from '../../core/repos/calls';

/** Between two reads of the row: the flow starts within a few database writes of the answer. */
const READ_EVERY_MS = 25;

/** An answered call with no flow yet, and how long after its answer its flow may still come (ms); else null. */
function flowDue(c: CallRow, waitMs: number): number | null {
  if (c.status !== 'progressing' || c.activeflow_id !== EMPTY_UUID || !c.tm_progressing) return null;
  const left = waitMs - Math.max(0, clock.nowMs() - new Date(c.tm_progressing).getTime());
  return left > 0 ? left : null;
}

/**
 * The call's row once its flow is known: `c` itself unless it was answered less than
 * TWILIO_REDIRECT_WAIT_MS ago with no flow yet; then the row as it is when the flow is written, the
 * call leaves progressing (or its record goes: null), the wait's time is up or `res`'s client went away.
 */
export async function withFlow(ctx: AppContext, c: CallRow, res: Response): Promise<CallRow | null> {
  const left = flowDue(c, ctx.config.twilioRedirectWaitMs);
  if (left === null) return c;
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), left);
  const gone = () => stop.abort();
  res.on('close', gone);
  platformMetrics.twilioRedirectsWaiting.inc();
  try {
    let row: CallRow | null = c;
    while (row && row.status === 'progressing' && row.activeflow_id === EMPTY_UUID) {
      const waited = await delay(READ_EVERY_MS, true, { signal: stop.signal }).catch(() => false);
      if (!waited) break;
      row = await callsRepo(ctx.db).getOwned(c.customer_id, c.id);
    }
    return row;
  } finally {
    platformMetrics.twilioRedirectsWaiting.dec();
    clearTimeout(timer);
    res.off('close', gone);
  }
}
