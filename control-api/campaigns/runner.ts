/**
 * The campaign runner: a loop in every control-api copy that steps each campaign in run or stopping.
 * A step runs in one transaction holding the campaign row (FOR UPDATE SKIP LOCKED): a copy that finds
 * the row locked skips it, so two copies never step one campaign at once and never dial a target
 * twice (targets are taken FOR UPDATE SKIP LOCKED too, so campaigns sharing an outdial do not
 * either). A step:
 *   1. reconciles live campaigncalls with their call (or activeflow): answered → progressing, ended →
 *      done with result success (normal hangup) or fail, the target retried per the outplan or done;
 *   2. stopping: becomes stop once no campaigncall is live;
 *   3. run: inside the outplan's dialling windows, dials due targets while the pacing allows
 *      (pacer.ts: service_level, the queue's available agents, dial_rate); with nothing left to
 *      dial and nothing live, end_handle stop stops it (and starts next_campaign_id), continue waits.
 * Originates, activeflow starts and events go out after commit (dialer.ts Outbox).
 */
import type http from 'node:http';
import type { Knex } from 'knex';
import { clock } from '../../core/clock';
import { EMPTY_UUID } from '../../core/ids';
import { callsRepo, callJson, type CallRow } from '../../core/repos/calls';
import { chargeEndedCall } from '../../core/billing/call-end';
import { activeflowsRepo } from '../../core/repos/activeflows';
import { campaigncallsRepo, campaigncallJson, type CampaigncallRow } from '../../core/repos/campaigncalls';
import { campaignJson, campaignsRepo, type CampaignRow } from '../../core/repos/campaigns';
import type { OutplanRow } from '../../core/repos/outplans';
import type { OutdialtargetRow } from '../../core/repos/outdials';
import { resultOfHangup } from '../../core/campaigns/model';
import { eventPublisher } from '../../core/events/bus';
import { publishResourceEvent } from '../../core/events/catalogue';
import type { HangupReason } from '../../core/calls/model';
import { commandBus } from '../calls/bus';
import type { Attachment } from '../attachments';
import type { AppContext } from '../context';
import { dialTarget, emptyOutbox, finishCampaigncall, type Ending, type Outbox } from './dialer';
import { paceOf } from './pacer';
import { outcomeOfHangup, windowOpen } from '../../core/campaigns/dialplan';
import { campaignRunRepo } from '../../core/repos/campaign-run';

/** A call still waiting for a media-app this long past its dial timeout is given up (no node took it). */
const ORPHAN_GRACE_MS = 30_000;

export interface RunnerOptions {
  /** Pause between passes over the active campaigns. */
  tickMs?: number;
}

const runners = new WeakMap<AppContext, CampaignRunner>();

/** The runner of this control-api copy, if it runs one (routes poke it after a status change). */
export function runnerOf(ctx: AppContext): CampaignRunner | undefined {
  return runners.get(ctx);
}

export class CampaignRunner {
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  private wake: (() => void) | null = null;
  private readonly tickMs: number;

  constructor(
    private readonly ctx: AppContext,
    opts: RunnerOptions = {},
  ) {
    this.tickMs = opts.tickMs ?? 500;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    runners.set(this.ctx, this);
    this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (runners.get(this.ctx) === this) runners.delete(this.ctx);
    this.wake?.();
    await this.loopDone;
  }

  /** Runs the next pass now instead of after the pause. */
  poke(): void {
    this.wake?.();
  }

  private async loop(): Promise<void> {
    // The first pass waits one interval too: nothing competes with the process's own start-up.
    while (this.running) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.tickMs);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = null;
      if (!this.running) break;
      await this.pass().catch((err: unknown) => this.ctx.logger.warn({ err: String(err) }, 'campaign pass failed'));
    }
  }

  /** One pass over every campaign in run or stopping. */
  async pass(): Promise<void> {
    for (const id of await campaignsRepo(this.ctx.db).activeIds()) {
      if (!this.running) return;
      await this.step(id).catch((err: unknown) => this.ctx.logger.warn({ err: String(err), campaign_id: id }, 'campaign step failed'));
    }
  }

  async step(id: string): Promise<void> {
    const out = emptyOutbox();
    await this.ctx.db.transaction(async (trx) => {
      const run = campaignRunRepo(trx);
      const c = await run.lockForStep(id);
      if (!c) return;
      const plan = await run.outplan(c.outplan_id);
      const live = await this.reconcile(trx, c, plan, out);
      if (c.status === 'stop') return; // only following the calls it still has
      if (c.status === 'stopping') {
        if (live === 0) await this.setStatus(trx, c, 'stop', out);
        return;
      }
      if (!plan || plan.tm_delete || !(await run.outdialIsLive(c.outdial_id))) {
        // Its outplan or outdial is gone: nothing can be dialled any more.
        await this.setStatus(trx, c, live === 0 ? 'stop' : 'stopping', out);
        return;
      }
      // Outside the outplan's windows nothing new starts; the campaign stays run and waits.
      if (windowOpen(plan.dial_windows ?? [], plan.timezone || 'UTC', clock.now())) {
        while ((await paceOf(trx, c)).budget > 0) {
          const t = await this.dueTarget(trx, c, plan);
          if (!t) break;
          if ((await dialTarget(this.ctx, trx, c, plan, t, out)) === 'capped') break;
        }
      }
      // Out of targets: nothing live, no target with a try left (due or waiting for its interval).
      if (c.end_handle === 'stop' && (await campaigncallsRepo(trx).countOngoing(c.id)) === 0 && !(await this.anyTriesLeft(trx, c, plan))) {
        await this.setStatus(trx, c, 'stop', out);
        await this.startNext(trx, c, out);
      }
    });
    await this.flush(out);
  }

  /** Brings the live campaigncalls up to date; returns how many are still live. */
  private async reconcile(trx: Knex.Transaction, c: CampaignRow, plan: OutplanRow | null, out: Outbox): Promise<number> {
    const ongoing = await campaigncallsRepo(trx).ongoing(c.id);
    let live = 0;
    for (const cc of ongoing) {
      if (!(await this.reconcileOne(trx, c, cc, plan, out))) live++;
    }
    return live;
  }

  /** True when the campaigncall is done now. */
  private async reconcileOne(trx: Knex.Transaction, c: CampaignRow, cc: CampaigncallRow, plan: OutplanRow | null, out: Outbox): Promise<boolean> {
    if (cc.reference_type === 'flow') {
      const af = await activeflowsRepo(trx).get(cc.activeflow_id);
      if (af && af.status === 'running') return false;
      const ok = !!af && af.end_reason !== 'error';
      await finishCampaigncall(trx, cc, { result: ok ? 'success' : 'fail', reason: ok ? 'finished' : 'error' }, plan, out);
      return true;
    }
    if (cc.reference_type !== 'call') {
      await finishCampaigncall(trx, cc, { result: 'fail', reason: 'undialable' }, plan, out);
      return true;
    }
    const call = await campaignRunRepo(trx).attemptCall(cc.reference_id);
    if (!call) {
      await finishCampaigncall(trx, cc, { result: 'fail', reason: 'failed' }, plan, out);
      return true;
    }
    // Answered, even if it ended between two steps: the campaigncall shows progressing first.
    const answered = call.status === 'progressing' || (call.status === 'hangup' && !!call.tm_progressing);
    if (answered && cc.status === 'dialing') {
      const row = await campaigncallsRepo(trx).advance(cc.id, ['dialing'], { status: 'progressing' });
      if (row) out.events.push(['campaigncall_updated', campaigncallJson(row)]);
    }
    if (call.status === 'hangup') {
      const ending = await endingOf(trx, call, answered && c.amd !== null);
      if (!ending) return false; // the AMD verdict is still being written
      await finishCampaigncall(trx, cc, ending, plan, out);
      return true;
    }
    const waited = clock.now().getTime() - new Date(call.tm_create).getTime();
    if (call.status === 'dialing' && call.node_id === '' && waited > (plan?.dial_timeout ?? 0) + ORPHAN_GRACE_MS) {
      // No media-app ever picked its originate up: end it here; the next step records the failure.
      const t = await callsRepo(this.ctx.db).hangup(call.id, 'failure', [chargeEndedCall]);
      if (t.changed && t.call) out.events.push(['call_hangup', callJson(t.call)]);
    }
    return false;
  }

  /** The next idle target of the campaign's outdial that is due and has a try left (locked). */
  private async dueTarget(trx: Knex.Transaction, c: CampaignRow, plan: OutplanRow): Promise<OutdialtargetRow | null> {
    return campaignRunRepo(trx).dueTarget(c.outdial_id, plan, clock.now());
  }

  /** Any idle target with a try left, due or not (a retry waiting for try_interval keeps the campaign on). */
  private async anyTriesLeft(trx: Knex.Transaction, c: CampaignRow, plan: OutplanRow): Promise<boolean> {
    return campaignRunRepo(trx).anyTriesLeft(c.outdial_id, plan);
  }

  private async setStatus(trx: Knex.Transaction, c: CampaignRow, to: 'stop' | 'stopping', out: Outbox): Promise<void> {
    if (c.status === to) return;
    const row = await campaignsRepo(trx).setStatus(c.id, [c.status], to);
    if (row) out.events.push([to === 'stop' ? 'campaign_status_stop' : 'campaign_status_stopping', campaignJson(row)]);
  }

  /** A campaign that ran out of targets hands over to next_campaign_id (when that one is stopped). */
  private async startNext(trx: Knex.Transaction, c: CampaignRow, out: Outbox): Promise<void> {
    if (!c.next_campaign_id || c.next_campaign_id === EMPTY_UUID || c.next_campaign_id === c.id) return;
    const next = await campaignsRepo(trx).setStatus(c.next_campaign_id, ['stop'], 'run');
    if (next && next.customer_id === c.customer_id) out.events.push(['campaign_status_run', campaignJson(next)]);
  }

  private async flush(out: Outbox): Promise<void> {
    const { ctx } = this;
    const bus = commandBus(ctx);
    for (const { call, campaigncallId } of out.originate) {
      try {
        await bus.originate([call.id], call.customer_id, `campaigncall-${campaigncallId}`);
        out.events.push(['call_created', callJson(call)]);
      } catch (err) {
        // Nothing will dial it: end the row; the next step records the failed try.
        ctx.logger.warn({ err: String(err), call_id: call.id }, 'campaign originate failed');
        await callsRepo(ctx.db)
          .hangup(call.id, 'failure', [chargeEndedCall])
          .catch(() => undefined);
      }
    }
    for (const af of out.activeflows) {
      try {
        await bus.startActiveflow(af.id, af.customerId, `activeflow-start-${af.id}`);
      } catch {
        await activeflowsRepo(ctx.db)
          .endOrphan(af.id, 'error', 'could not reach a media-app node')
          .catch(() => undefined);
      }
    }
    if (out.events.length === 0) return;
    try {
      const p = eventPublisher(ctx);
      for (const [type, payload] of out.events) await publishResourceEvent(p, type, payload);
    } catch (err) {
      ctx.logger.warn({ err: String(err) }, 'could not publish campaign events');
    }
  }
}

/** An activeflow still running this long after its call hung up is not waited for (its AMD verdict is read as is). */
const VERDICT_GRACE_MS = 5_000;

/**
 * What a finished call attempt ended with. With AMD the verdict is read from the call's activeflow
 * (svc.amd.result); while that activeflow is still winding down (briefly, after the hangup) this
 * returns null so the next step reads it complete.
 */
async function endingOf(trx: Knex.Transaction, call: Pick<CallRow, 'hangup_reason' | 'tm_hangup' | 'activeflow_id'>, withAmd: boolean): Promise<Ending | null> {
  const reason = call.hangup_reason as HangupReason;
  let amd = '';
  if (withAmd && call.activeflow_id && call.activeflow_id !== EMPTY_UUID) {
    const af = await activeflowsRepo(trx).get(call.activeflow_id);
    amd = af?.variables?.['svc.amd.result'] ?? '';
    const sinceHangup = call.tm_hangup ? clock.now().getTime() - new Date(call.tm_hangup).getTime() : Infinity;
    if (!amd && af?.status === 'running' && sinceHangup < VERDICT_GRACE_MS) return null;
  }
  return { result: resultOfHangup(reason), reason: outcomeOfHangup(reason), amd: amd || (reason === 'amd' ? 'machine' : '') };
}

/** CAMPAIGN_TICK_MS sets the pause between passes (default 500 ms); CAMPAIGN_RUNNER=off runs none in this copy. */
export const attachment: Attachment = {
  name: 'campaign-runner',
  async start(_server: http.Server, ctx: AppContext) {
    if (process.env.CAMPAIGN_RUNNER === 'off') return { close: async () => undefined };
    const tick = Number(process.env.CAMPAIGN_TICK_MS);
    const runner = new CampaignRunner(ctx, { tickMs: Number.isFinite(tick) && tick >= 20 ? tick : undefined });
    runner.start();
    return { close: () => runner.stop() };
  },
};
