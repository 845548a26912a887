/**
 * A Calls redirect (`Url`/`Twiml`) right after the answer (issue 54). media-app writes the answer
 * (progressing: Twilio's in-progress) and then starts the call's flow: it writes the activeflow's
 * record, publishes `activeflow_created`, and then writes the call row's activeflow_id
 * (media-app/call/factory.ts runFlow). Until the record is written the call is in progress with no flow
 * to redirect. Twilio never refuses a redirect of an in-progress call, so the request waits for the
 * flow: it watches the call's events (flow-starts.ts), reads the state once the watch reads the event
 * stream (so an event published before that is already in the database) and again on each event of
 * the call, until its flow runs, the call leaves progressing (or its record goes: null), the client goes,
 * or TWILIO_REDIRECT_WAIT_MS after the answer has passed (a call answered that long ago with no flow has
 * none coming: a connect leg). The wait, its watch and its timer are the request's own and end with it.
 * At most TWILIO_REDIRECT_MAX_WAITING wait at once (then 429, code 20429). media-app stays the one writer
 * of the rows; this only reads them.
 */
import type { Response } from 'express';
import type { AppContext } from '../context';
import { clock } from '../../core/clock';
import { EMPTY_UUID } from '../../core/ids';
import { platformMetrics } from '../../core/metrics';
import { activeflowsRepo } from '../../core/repos/activeflows';
import { callsRepo, type CallRow } from '../../core/repos/calls';
import { flowStarts } from './flow-starts';
import { TwilioError } from './errors';

/** An answered call with no flow yet, and how long after its answer its flow may still come (ms); else null. */
function flowDue(c: CallRow, waitMs: number): number | null {
  if (c.status !== 'progressing' || c.activeflow_id !== EMPTY_UUID || !c.tm_progressing) return null;
  const left = waitMs - Math.max(0, clock.nowMs() - new Date(c.tm_progressing).getTime());
  return left > 0 ? left : null;
}

/**
 * The call's row as it is now, its activeflow_id the running flow's once that flow's record exists
 * (the row's own field is written a moment later); `done` when the wait is over.
 */
async function current(ctx: AppContext, c: CallRow): Promise<{ row: CallRow | null; done: boolean }> {
  const row = await callsRepo(ctx.db).getOwned(c.customer_id, c.id);
  if (!row || row.status !== 'progressing' || row.activeflow_id !== EMPTY_UUID) return { row, done: true };
  const flow = await activeflowsRepo(ctx.db).runningForCall(c.customer_id, c.id);
  return flow ? { row: { ...row, activeflow_id: flow.id }, done: true } : { row, done: false };
}

/**
 * The call's row once its flow is known: `c` itself unless it was answered less than
 * TWILIO_REDIRECT_WAIT_MS ago with no flow yet; then the row as it is when the flow runs (activeflow_id
 * set), the call leaves progressing (or its record goes: null), the wait's time is up or `res`'s client
 * went away. Throws 429 (20429) when too many wait already, 503 (20503) when the event stream cannot be read.
 */
export async function withFlow(ctx: AppContext, c: CallRow, res: Response): Promise<CallRow | null> {
  const left = flowDue(c, ctx.config.twilioRedirectWaitMs);
  if (left === null) return c;
  let kicked = false;
  let wake: (() => void) | null = null;
  const kick = () => {
    kicked = true;
    wake?.();
  };
  const watch = flowStarts(ctx).watch(c.id, kick);
  let over = false;
  let stopped: () => void = () => undefined;
  /** settles when the wait is over (its timer, the client gone): bounds the wait for the reader too */
  const ended = new Promise<void>((resolve) => (stopped = resolve));
  const end = () => {
    over = true;
    wake?.();
    stopped();
  };
  const timer = setTimeout(end, left);
  res.on('close', end);
  platformMetrics.twilioRedirectsWaiting.inc();
  try {
    await Promise.race([
      watch.ready.catch(() => {
        throw new TwilioError(503, 20503, 'Service unavailable, try again shortly', { 'Retry-After': '1' });
      }),
      ended,
    ]);
    let now: { row: CallRow | null; done: boolean } = { row: c, done: false };
    while (!over) {
      kicked = false;
      now = await current(ctx, c);
      if (now.done || over) break;
      if (!kicked) await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
    }
    return now.row;
  } finally {
    platformMetrics.twilioRedirectsWaiting.dec();
    clearTimeout(timer);
    res.off('close', end);
    watch.release();
  }
}
