// Dial plans, pacing and AMD options of campaigns. The rules (windows in a time zone, outcomes and
// their retry intervals, pacing) as pure functions; the API's validation in the error envelope; and
// the runner against real Postgres, Redis and a real media-app running flow campaigns: a closed
// window holds a running campaign, the queue's available agents and dial_rate pace it.
import { expect } from 'chai';
import { createAgent, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { truncateAll } from '../../testkit/db';
import { sleep, until, type Platform } from '../../testkit/media-app/harness';
import { queuesRepo } from '../../core/repos/queues';
import { newId } from '../../core/ids';
import { localTime, outcomeOfHangup, retryDelay, windowOpen, WEEKDAYS } from '../../core/campaigns/dialplan';
import { pacing } from '../../core/campaigns/pacing';
import { api, eventsSince, expectError, useCampaignStack } from './support';
import { SOURCE_NUMBER, numberFor, startGateway } from './gateway';

const ms = (legacy: string) => Date.parse(legacy.replace(' ', 'T') + 'Z');

describe('campaign dial plans: rules', () => {
  it('windows: weekday and time in the outplan zone, start inclusive, end exclusive, empty = always', () => {
    const at = new Date('2026-11-21T05:00:00Z'); // Saturday 05:00 UTC = Friday 21:00 in Los Angeles, Saturday 14:00 in Tokyo
    expect(localTime(at, 'UTC')).to.deep.equal({ day: 'sat', minute: 300 });
    expect(localTime(at, 'America/Los_Angeles')).to.deep.equal({ day: 'fri', minute: 21 * 60 });
    expect(localTime(at, 'Asia/Tokyo')).to.deep.equal({ day: 'sat', minute: 14 * 60 });
    expect(windowOpen([], 'UTC', at)).to.equal(true);
    const weekdays9to5 = [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'] as const, start: '09:00', end: '17:00' }].map((w) => ({ ...w, days: [...w.days] }));
    expect(windowOpen(weekdays9to5, 'UTC', at)).to.equal(false);
    expect(windowOpen(weekdays9to5, 'Asia/Tokyo', at), 'Saturday in Tokyo').to.equal(false);
    expect(windowOpen([{ days: ['fri'], start: '20:00', end: '24:00' }], 'America/Los_Angeles', at)).to.equal(true);
    expect(windowOpen([{ days: ['fri'], start: '21:00', end: '22:00' }], 'America/Los_Angeles', at), 'start inclusive').to.equal(true);
    expect(windowOpen([{ days: ['fri'], start: '20:00', end: '21:00' }], 'America/Los_Angeles', at), 'end exclusive').to.equal(false);
  });

  it('outcomes and their retry intervals', () => {
    expect(['normal', 'busy', 'noanswer', 'timeout', 'amd', 'failed', 'dialout', 'cancel', ''].map((r) => outcomeOfHangup(r as never))).to.deep.equal([
      'answered',
      'busy',
      'noanswer',
      'noanswer',
      'machine',
      'failed',
      'failed',
      'failed',
      'failed',
    ]);
    const plan = { try_interval: 1000, try_interval_busy: 200, try_interval_noanswer: null, try_interval_failed: 0, try_interval_machine: 9000 };
    expect(['busy', 'noanswer', 'failed', 'undialable', 'machine', 'error'].map((o) => retryDelay(plan, o as never))).to.deep.equal([200, 1000, 0, 0, 9000, 1000]);
  });

  it('pacing: service level, available agents × percentage, dial rate', () => {
    expect(pacing({ serviceLevel: 3, live: 1, dialRate: 0, sinceLastDialMs: 0 })).to.deep.equal({ budget: 2, limit: 'none' });
    expect(pacing({ serviceLevel: 3, live: 3, dialRate: 0, sinceLastDialMs: 0 })).to.deep.equal({ budget: 0, limit: 'service_level' });
    expect(pacing({ serviceLevel: 150, live: 9, agents: { available: 4, waiting: 2 }, dialRate: 0, sinceLastDialMs: 0 }).budget).to.equal(4);
    expect(pacing({ serviceLevel: 100, live: 0, agents: { available: 0, waiting: 0 }, dialRate: 0, sinceLastDialMs: 0 })).to.deep.equal({ budget: 0, limit: 'agents' });
    expect(pacing({ serviceLevel: 10, live: 0, dialRate: 60, sinceLastDialMs: 999 })).to.deep.equal({ budget: 0, limit: 'dial_rate' });
    expect(pacing({ serviceLevel: 10, live: 0, dialRate: 60, sinceLastDialMs: 1000 })).to.deep.equal({ budget: 1, limit: 'none' });
  });
});

describe('campaign dial plans: API and runner', function () {
  this.timeout(90_000);
  let p: Platform;
  let t: TestApp;
  let f: Fixture;
  let a: ReturnType<typeof api>;

  useCampaignStack(
    1,
    {},
    (s) =>
      ({
        p,
        apps: [t],
      } = s),
  );
  let since = 0;
  beforeEach(async () => {
    since = Date.now() - 1000;
    await truncateAll(t.ctx.db);
    f = await createFixture(t.ctx);
    a = api(t, f);
  });

  async function ok(res: Promise<{ status: number; body: any }>) {
    const r = await res;
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body;
  }
  const source = { type: 'tel', target: '+15550001111' };

  /** A flow campaign (activeflows on the real media-app, no call) over n targets. */
  async function flowCampaign(n: number, plan: object, campaign: object, sleepMs = 600) {
    const outplan = await ok(a.post('/outplans', { source, try_interval: 0, ...plan }));
    const outdial = await ok(a.post('/outdials', {}));
    for (let i = 0; i < n; i++) await ok(a.post(`/outdials/${outdial.id}/targets`, { name: `t${i}`, destination_0: { type: 'tel', target: `+1555000400${i}` } }));
    const c = await ok(
      a.post('/campaigns', { type: 'flow', outplan_id: outplan.id, outdial_id: outdial.id, service_level: 10, actions: [{ type: 'sleep', option: { duration: sleepMs } }], ...campaign }),
    );
    return { outplan, outdial, campaign: c };
  }
  const ccsOf = async (id: string) => ((await ok(a.get(`/campaigns/${id}/campaigncalls`))).result as { status: string; tm_create: string; tm_update: string; result_reason: string }[]).reverse();
  const status = async (id: string) => (await ok(a.get(`/campaigns/${id}`))).status as string;

  it('bad dial plans, AMD options and dial rates are refused in the envelope; good ones are stored and returned', async () => {
    const bad: object[] = [
      { timezone: 'Mars/Olympus' },
      { timezone: '' },
      { dial_windows: [{ days: ['mon'], start: '17:00', end: '09:00' }] },
      { dial_windows: [{ days: ['mon'], start: '9:00', end: '17:00' }] },
      { dial_windows: [{ days: ['funday'], start: '09:00', end: '17:00' }] },
      { dial_windows: [{ days: [], start: '09:00', end: '17:00' }] },
      { dial_windows: [{ days: ['mon'], start: '09:00', end: '24:01' }] },
      { dial_windows: [{ days: ['mon'], start: '09:00', end: '17:00', tz: 'UTC' }] },
      { dial_windows: 'always' },
      { try_interval_busy: -1 },
      { try_interval_noanswer: 1.5 },
      { try_interval_machine: '10' },
    ];
    for (const b of bad) expectError(await a.post('/outplans', { source, ...b }), 400, 'INVALID_ARGUMENT');
    const windows = [
      { days: ['mon', 'tue'], start: '09:00', end: '12:30' },
      { days: ['sat'], start: '00:00', end: '24:00' },
    ];
    const plan = await ok(a.post('/outplans', { source, timezone: 'Europe/Paris', dial_windows: windows, try_interval_busy: 100 }));
    expect(plan).to.include({ timezone: 'Europe/Paris', try_interval_busy: 100, try_interval_noanswer: null });
    expect(plan.dial_windows).to.deep.equal(windows);
    for (const b of bad) expectError(await a.put(`/outplans/${plan.id}/dial_info`, b), 400, 'INVALID_ARGUMENT');
    const upd = await ok(a.put(`/outplans/${plan.id}/dial_info`, { dial_windows: [], try_interval_busy: null, try_interval_failed: 5 }));
    expect(upd).to.include({ timezone: 'Europe/Paris', try_interval_busy: null, try_interval_failed: 5 });
    expect(upd.dial_windows).to.deep.equal([]);

    for (const b of [{ amd: { machine_handle: 'explode' } }, { amd: { beep: true } }, { amd: 'on' }, { dial_rate: -1 }, { dial_rate: 6001 }, { dial_rate: 'fast' }]) {
      expectError(await a.post('/campaigns', { service_level: 1, ...b }), 400, 'INVALID_ARGUMENT');
    }
    const c = await ok(a.post('/campaigns', { service_level: 1, amd: { machine_handle: 'hangup' }, dial_rate: 30, actions: [{ type: 'hangup' }] }));
    expect(c).to.include({ dial_rate: 30 });
    expect(c.amd).to.deep.equal({ machine_handle: 'hangup' });
    expect(
      c.actions.map((x: { type: string }) => x.type),
      'actions stay as given',
    ).to.deep.equal(['hangup']);
    const flow = await t.ctx
      .db('flows')
      .where({ id: (await t.ctx.db('campaigns').where({ id: c.id }).first())!.flow_id })
      .first();
    expect(
      flow!.actions.map((x: { type: string }) => x.type),
      'the flow runs amd first',
    ).to.deep.equal(['amd', 'hangup']);
    const off = await ok(a.put(`/campaigns/${c.id}`, { amd: null }));
    expect(off.amd).to.equal(null);
    const flow2 = await t.ctx
      .db('flows')
      .where({ id: (await t.ctx.db('campaigns').where({ id: c.id }).first())!.flow_id })
      .first();
    expect(flow2!.actions.map((x: { type: string }) => x.type)).to.deep.equal(['hangup']);
    // one campaign_updated per change: asking for what it already has changes (and publishes) nothing
    await ok(a.put(`/campaigns/${c.id}`, { amd: null, dial_rate: 30 }));
    await ok(a.put(`/campaigns/${c.id}/service_level`, { service_level: 1 }));
    expect(((await eventsSince(p.redis, since)).get(c.id) ?? []).map((e) => e.event_type)).to.deep.equal(['campaign_created', 'campaign_updated']);
  });

  it('outside its dialling window a running campaign dials nothing and stays run; it dials once the window opens', async () => {
    const today = localTime(new Date(), 'UTC').day;
    const notToday = WEEKDAYS.filter((d) => d !== today);
    const { outplan, campaign } = await flowCampaign(2, { dial_windows: [{ days: notToday, start: '00:00', end: '24:00' }] }, {}, 100);
    await ok(a.put(`/campaigns/${campaign.id}/status`, { status: 'run' }));
    await sleep(1200);
    expect(await status(campaign.id)).to.equal('run');
    expect(await ccsOf(campaign.id)).to.have.length(0);
    await ok(a.put(`/outplans/${outplan.id}/dial_info`, { dial_windows: [{ days: [today], start: '00:00', end: '24:00' }] }));
    await until(async () => (await status(campaign.id)) === 'stop', 20_000, 'campaign stop');
    const ccs = await ccsOf(campaign.id);
    expect(ccs.map((c) => [c.status, c.result_reason])).to.deep.equal([
      ['done', 'finished'],
      ['done', 'finished'],
    ]);
    await until(async () => ((await eventsSince(p.redis, since)).get(campaign.id) ?? []).length >= 3, 5000, 'campaign_status_stop');
    expect(((await eventsSince(p.redis, since)).get(campaign.id) ?? []).map((e) => e.event_type)).to.deep.equal(['campaign_created', 'campaign_status_run', 'campaign_status_stop']);
  });

  it('with a queue: no more attempts waiting than available agents × service_level %; none without agents', async () => {
    const tag = newId();
    await t.ctx.db('tags').insert({ id: tag, customer_id: f.customer.id, name: 'sales', detail: '', tm_create: new Date() });
    const queue = await queuesRepo(t.ctx.db).create(f.customer.id, { name: 'sales', tag_ids: [tag] });
    const agentIds: string[] = [];
    for (let i = 0; i < 3; i++) agentIds.push((await createAgent(t.ctx, f.customer.id, 1)).agent.id);
    const setAgents = async (ids: string[], patch: object) => t.ctx.db('agents').whereIn('id', ids).update(patch);
    const addresses = JSON.stringify([{ type: 'tel', target: '+15550009999' }]);
    await setAgents(agentIds, { status: 'offline', tag_ids: JSON.stringify([tag]), addresses });
    // an available agent without the queue's tag does not count
    await setAgents([agentIds[2]!], { status: 'available', tag_ids: '[]' });
    const { campaign } = await flowCampaign(6, {}, { queue_id: queue.id, service_level: 150 }, 700);
    await ok(a.put(`/campaigns/${campaign.id}/status`, { status: 'run' }));
    await sleep(800);
    expect(await ccsOf(campaign.id), 'no available agent: nothing dialled').to.have.length(0);
    expect(await status(campaign.id)).to.equal('run');

    await setAgents(agentIds.slice(0, 2), { status: 'available' }); // 2 agents × 150 % = 3 at once
    let maxLive = 0;
    await until(
      async () => {
        const ccs = await ccsOf(campaign.id);
        maxLive = Math.max(maxLive, ccs.filter((c) => c.status !== 'done').length);
        return ccs.length === 6 && ccs.every((c) => c.status === 'done');
      },
      30_000,
      'all six done',
    );
    expect(maxLive, 'attempts waiting at once').to.equal(3);
  });

  it('dial_rate spaces attempts evenly (60000 / dial_rate ms) even when the service level allows more', async () => {
    const { campaign } = await flowCampaign(4, {}, { dial_rate: 150 }, 50); // one per 400 ms
    await ok(a.put(`/campaigns/${campaign.id}/status`, { status: 'run' }));
    await until(async () => (await status(campaign.id)) === 'stop', 20_000, 'campaign stop');
    const starts = (await ccsOf(campaign.id)).map((c) => ms(c.tm_create));
    expect(starts).to.have.length(4);
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!, `gap ${i}`).to.be.at.least(395);
  });

  it("the customer's cap on live PSTN calls holds the campaign like pacing: no try spent, every target answered once", async () => {
    await t.ctx.db('customers').where({ id: f.customer.id }).update({ max_concurrent_pstn_calls: 2 });
    const gw = await startGateway(t, f, 4, 60_000);
    const outplan = await ok(a.post('/outplans', { source: { type: 'tel', target: SOURCE_NUMBER }, dial_timeout: 5000, try_interval: 0 }));
    const outdial = await ok(a.post('/outdials', {}));
    for (let i = 0; i < 4; i++) await ok(a.post(`/outdials/${outdial.id}/targets`, { destination_0: { type: 'tel', target: numberFor('answer', 500 + i) } }));
    const c = await ok(a.post('/campaigns', { outplan_id: outplan.id, outdial_id: outdial.id, service_level: 4, actions: [{ type: 'sleep', option: { duration: 800 } }, { type: 'hangup' }] }));
    let maxLive = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const r = await t.ctx.db('calls').where({ customer_id: f.customer.id }).whereNot({ status: 'hangup' }).count<{ count: string }[]>('id as count');
        maxLive = Math.max(maxLive, Number(r[0]!.count));
        await sleep(25);
      }
    })();
    await ok(a.put(`/campaigns/${c.id}/status`, { status: 'run' }));
    await until(async () => (await status(c.id)) === 'stop', 40_000, 'campaign stop');
    sampling = false;
    await sampler;
    const r = await gw.done;
    expect(r.code, r.errors).to.equal(0);
    expect(maxLive, 'calls up at once').to.equal(2);
    const ccs = (await ok(a.get(`/campaigns/${c.id}/campaigncalls`))).result as { result: string; result_reason: string; try_count: number }[];
    expect(ccs.map((x) => [x.result, x.result_reason, x.try_count])).to.deep.equal(Array(4).fill(['success', 'answered', 1]));
  });
});
