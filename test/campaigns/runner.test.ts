// The campaign runner end to end: control-api routes start campaigns, TWO runners (two control-api
// copies on the same Postgres and Redis) step them, calls go through the real BullMQ originate queue
// to a real media-app, sip-server, and sipp UASes standing for the targets (a provider + route for tel
// targets, sip targets straight at a sipp). Results, tries, pacing and events are checked.
import { sipProvider } from '../../testkit/providers';
import { expect } from 'chai';
import { createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { truncateAll } from '../../testkit/db';
import { answeringUas, sipp, until, type Platform } from '../../testkit/media-app/harness';
import { addBalance, ensureBillingAccount } from '../../core/billing';
import { numbersRepo } from '../../core/repos/numbers';
import { routesRepo } from '../../core/repos/routes';
import { api, awaitEvents, recentEventsFor, useCampaignStack } from './support';
import { InviteCounter } from '../../testkit/queue/sip-parties';

interface Cc {
  id: string;
  activeflow_id: string;
  reference_type: string;
  status: string;
  result: string;
  outdial_target_id: string;
  destination_index: number;
  try_count: number;
  reference_id: string;
  tm_create: string;
}

describe('campaign runner: real calls through media-app and sipp', function () {
  this.timeout(90_000);
  let p: Platform;
  let t1: TestApp;
  let f: Fixture;
  let a: ReturnType<typeof api>;

  // both copies share the media-app's key prefix, so their originates reach it
  useCampaignStack(
    2,
    { EGRESS_ALLOW_CIDRS: '127.0.0.0/8' },
    (s) =>
      ({
        p,
        apps: [t1],
      } = s),
  );
  beforeEach(async () => {
    await truncateAll(t1.ctx.db);
    f = await createFixture(t1.ctx);
    a = api(t1, f);
  });

  async function ok(res: Promise<{ status: number; body: any }>) {
    const r = await res;
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body;
  }

  async function campaignOf(targets: object[], plan: object, campaign: object) {
    const outplan = await ok(a.post('/outplans', { name: 'plan', ...plan }));
    const outdial = await ok(a.post('/outdials', { name: 'list' }));
    const ids: string[] = [];
    for (const [i, tg] of targets.entries()) ids.push((await ok(a.post(`/outdials/${outdial.id}/targets`, { name: `t${i}`, ...tg }))).id);
    const c = await ok(a.post('/campaigns', { name: 'c', outplan_id: outplan.id, outdial_id: outdial.id, ...campaign }));
    return { outplan, outdial, targetIds: ids, campaign: c };
  }

  const status = async (id: string) => (await ok(a.get(`/campaigns/${id}`))).status as string;
  const ccsOf = async (id: string): Promise<Cc[]> => (await ok(a.get(`/campaigns/${id}/campaigncalls`))).result.reverse();
  const waitStop = (id: string, ms = 45_000) => until(async () => (await status(id)) === 'stop', ms, 'campaign stop');

  it('5 tel targets through a provider at service level 2: never more than 2 calls up, all answered, results recorded, no target dialled twice', async () => {
    await t1.ctx.repos.outboundConfigs.update(f.outboundConfig.id, { destination_whitelist: ['us'] }, { customerId: f.customer.id });
    await numbersRepo(t1.ctx.db).create({ customer_id: f.customer.id, number: '+15550001111', type: 'normal' });
    const acc = await ensureBillingAccount(t1.ctx.db, f.customer.id);
    await addBalance(t1.ctx.db, acc.id, 100_000_000, `campaign-test-${acc.id}`);
    const gw = await freePort();
    const provider = await sipProvider(t1.ctx.db, `127.0.0.1:${gw}`, 'sipp-gw');
    await routesRepo(t1.ctx.db).create({ customer_id: f.customer.id, name: 'all', detail: '', provider_id: provider.id, priority: 1, target: 'all' });
    const uas = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(gw), '-m', '5', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 60_000 });
    await uas.port;
    const targets = [1, 2, 3, 4, 5].map((n) => ({ destination_0: { type: 'tel', target: `+1555000200${n}` } }));
    const { campaign, targetIds, outdial } = await campaignOf(
      targets,
      { source: { type: 'tel', target: '+15550001111' }, dial_timeout: 10_000, try_interval: 500 },
      { service_level: 2, actions: [{ type: 'sleep', option: { duration: 1200 } }, { type: 'hangup' }] },
    );

    let maxLive = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const r = await t1.ctx.db('calls').where({ customer_id: f.customer.id }).whereNot({ status: 'hangup' }).count<{ count: string }[]>('id as count');
        maxLive = Math.max(maxLive, Number(r[0]!.count));
        await new Promise((res) => setTimeout(res, 25));
      }
    })();
    expect((await ok(a.put(`/campaigns/${campaign.id}/status`, { status: 'run' }))).status).to.equal('run');
    await waitStop(campaign.id);
    sampling = false;
    await sampler;

    const sippResult = await uas.done;
    expect(sippResult.code, sippResult.errors).to.equal(0);
    expect(sippResult.messages.match(/^INVITE sip:/gm)).to.have.length(5);
    expect(maxLive, 'calls up at once').to.be.at.most(2);
    expect(maxLive, 'the service level is used').to.equal(2);

    const ccs = await ccsOf(campaign.id);
    expect(ccs).to.have.length(5);
    expect(new Set(ccs.map((c) => c.outdial_target_id))).to.deep.equal(new Set(targetIds));
    for (const cc of ccs) expect(cc).to.include({ status: 'done', result: 'success', destination_index: 0, try_count: 1 });
    const calls = await t1.ctx.db('calls').whereIn(
      'id',
      ccs.map((c) => c.reference_id),
    );
    expect(calls.map((c) => c.hangup_reason)).to.deep.equal(Array(5).fill('normal'));
    for (const c of calls) expect(c.flow_id).to.equal((await t1.ctx.db('campaigns').where({ id: campaign.id }).first())!.flow_id);
    const tgts = (await ok(a.get(`/outdials/${outdial.id}/targets`))).result;
    for (const tg of tgts) expect(tg).to.include({ status: 'done', try_count_0: 1 });

    const cEvents = (await awaitEvents(p.redis, campaign.id, 3)).map((e) => e.event_type);
    expect(cEvents).to.deep.equal(['campaign_created', 'campaign_status_run', 'campaign_status_stop']);
    const ccEvents = (await recentEventsFor(p.redis, ccs[0]!.id)).map((e) => e.event_type);
    expect(ccEvents).to.deep.equal(['campaigncall_created', 'campaigncall_updated', 'campaigncall_updated']);
    expect((await recentEventsFor(p.redis, ccs[0]!.id)).map((e) => e.data.status)).to.deep.equal(['dialing', 'progressing', 'done']);
  });

  it('zero balance: a tel target is not dialled (the campaigncall fails, the gateway receives no INVITE)', async () => {
    await t1.ctx.repos.outboundConfigs.update(f.outboundConfig.id, { destination_whitelist: ['us'] }, { customerId: f.customer.id });
    await numbersRepo(t1.ctx.db).create({ customer_id: f.customer.id, number: '+15550001112', type: 'normal' });
    const gw = await InviteCounter.open({ busy: true });
    try {
      const provider = await sipProvider(t1.ctx.db, `127.0.0.1:${gw.port}`, 'gw');
      await routesRepo(t1.ctx.db).create({ customer_id: f.customer.id, name: 'all', detail: '', provider_id: provider.id, priority: 1, target: 'all' });
      const { campaign } = await campaignOf(
        [{ destination_0: { type: 'tel', target: '+15550003001' } }],
        { source: { type: 'tel', target: '+15550001112' }, dial_timeout: 5_000, try_interval: 200 },
        { service_level: 1, actions: [{ type: 'hangup' }] },
      );
      await ok(a.put(`/campaigns/${campaign.id}/status`, { status: 'run' }));
      await waitStop(campaign.id);
      const ccs = await ccsOf(campaign.id);
      expect(ccs.length).to.be.greaterThan(0);
      for (const cc of ccs) expect(cc).to.include({ status: 'done', result: 'fail' });
      expect(gw.count).to.equal(0);
    } finally {
      gw.close();
    }
  });

  it('a busy destination is retried per the outplan (max tries, try interval), then the next destination, then marked', async () => {
    const busyPort = await freePort();
    const answerPort = await freePort();
    // target A: destination_0 busy twice, then destination_1 answers; target B: busy twice, done with fail
    const busy = sipp(answeringUas({ final: 486 }), ['-i', '127.0.0.1', '-p', String(busyPort), '-m', '4'], { killAfterMs: 60_000 });
    const answer = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(answerPort), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 60_000 });
    await Promise.all([busy.port, answer.port]);
    const tryInterval = 1000;
    const { campaign, targetIds } = await campaignOf(
      [
        { destination_0: { type: 'sip', target: `a-busy@127.0.0.1:${busyPort}` }, destination_1: { type: 'sip', target: `a-ok@127.0.0.1:${answerPort}` } },
        { destination_0: { type: 'sip', target: `b-busy@127.0.0.1:${busyPort}` } },
      ],
      { source: { type: 'sip', target: 'campaign@sip.test' }, dial_timeout: 8000, try_interval: tryInterval, max_try_count_0: 2, max_try_count_1: 1 },
      { service_level: 2, actions: [{ type: 'hangup' }] },
    );
    await ok(a.put(`/campaigns/${campaign.id}/status`, { status: 'run' }));
    await waitStop(campaign.id);
    const [b1, b2] = [await busy.done, await answer.done];
    expect(b1.code, b1.errors).to.equal(0);
    expect(b2.code, b2.errors).to.equal(0);

    const ccs = await ccsOf(campaign.id);
    const of = (id: string) => ccs.filter((c) => c.outdial_target_id === id).map((c) => [c.destination_index, c.try_count, c.result]);
    expect(of(targetIds[0]!)).to.deep.equal([
      [0, 1, 'fail'],
      [0, 2, 'fail'],
      [1, 1, 'success'],
    ]);
    expect(of(targetIds[1]!)).to.deep.equal([
      [0, 1, 'fail'],
      [0, 2, 'fail'],
    ]);
    for (const id of targetIds) {
      const tries = ccs.filter((c) => c.outdial_target_id === id).map((c) => Date.parse(c.tm_create.replace(' ', 'T') + 'Z'));
      for (let i = 1; i < tries.length; i++) expect(tries[i]! - tries[i - 1]!, 'try interval').to.be.at.least(tryInterval);
    }
    const busyCalls = await t1.ctx.db('calls').whereIn(
      'id',
      ccs.filter((c) => c.result === 'fail').map((c) => c.reference_id),
    );
    expect(busyCalls.map((c) => c.hangup_reason)).to.deep.equal(Array(4).fill('busy'));
    const tg = async (id: string) => await t1.ctx.db('outdialtargets').where({ id }).first();
    expect(await tg(targetIds[0]!)).to.include({ status: 'done', try_count_0: 2, try_count_1: 1 });
    expect(await tg(targetIds[1]!)).to.include({ status: 'done', try_count_0: 2, try_count_1: 0 });
  });

  // media-app claims each activeflow.start and runs the flow; its end (read from the record) is the result.
  it('a flow campaign: an activeflow per target (reference campaign, target in variables) run by media-app; its end is the result', async () => {
    const { campaign, targetIds } = await campaignOf(
      [
        { name: 'alice', destination_0: { type: 'tel', target: '+15550003001' } },
        { name: 'bob', destination_0: { type: 'tel', target: '+15550003002' } },
      ],
      { source: { type: 'tel', target: '+15550001111' }, try_interval: 0 },
      {
        type: 'flow',
        service_level: 1,
        actions: [
          { type: 'variable_set', option: { key: 'greeting', value: 'hello ${svc.outdialtarget.name}' } },
          { type: 'sleep', option: { duration: 300 } },
        ],
      },
    );
    await ok(a.put(`/campaigns/${campaign.id}/status`, { status: 'run' }));
    await waitStop(campaign.id, 20_000);
    const ccs = await ccsOf(campaign.id);
    expect(ccs.map((c) => [c.outdial_target_id, c.status, c.result, c.reference_type])).to.deep.equal([
      [targetIds[0], 'done', 'success', 'flow'],
      [targetIds[1], 'done', 'success', 'flow'],
    ]);
    const { flow_id } = (await t1.ctx.db('campaigns').where({ id: campaign.id }).first())!;
    const afs = [];
    for (const [i, cc] of ccs.entries()) {
      const af = await t1.ctx.db('activeflows').where({ id: cc.activeflow_id }).first();
      expect(af).to.include({ reference_type: 'campaign', reference_id: cc.id, status: 'ended', end_reason: 'finished', flow_id });
      expect(af!.variables).to.include({ 'svc.campaign.id': campaign.id, 'svc.campaigncall.id': cc.id, greeting: `hello ${['alice', 'bob'][i]}` });
      afs.push(af);
    }
    // service level 1: bob's activeflow was created only once alice's had ended
    expect(new Date(afs[1]!.tm_create).getTime()).to.be.at.least(new Date(afs[0]!.tm_update!).getTime());
    expect(await t1.ctx.db('calls').where({ customer_id: f.customer.id })).to.have.length(0);
  });

  it('stop mid-run: stopping while the live call goes on, no new target dialled, then stop', async () => {
    const port = await freePort();
    const uas = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 60_000 });
    await uas.port;
    const { campaign, targetIds } = await campaignOf(
      [1, 2, 3, 4].map((n) => ({ destination_0: { type: 'sip', target: `t${n}@127.0.0.1:${port}` } })),
      { source: { type: 'sip', target: 'campaign@sip.test' }, dial_timeout: 8000, try_interval: 0 },
      { service_level: 1, actions: [{ type: 'sleep', option: { duration: 2500 } }, { type: 'hangup' }] },
    );
    await ok(a.put(`/campaigns/${campaign.id}/status`, { status: 'run' }));
    await until(async () => (await ccsOf(campaign.id)).some((c) => c.status === 'progressing'), 15_000, 'first call answered');
    expect((await ok(a.put(`/campaigns/${campaign.id}/status`, { status: 'stop' }))).status).to.equal('stopping');
    expect((await ok(a.put(`/campaigns/${campaign.id}/status`, { status: 'stop' }))).status).to.equal('stopping');
    await waitStop(campaign.id, 20_000);
    await new Promise((r) => setTimeout(r, 400)); // a few more runner passes: still nothing dialled
    const r = await uas.done;
    expect(r.code, r.errors).to.equal(0);
    const ccs = await ccsOf(campaign.id);
    expect(ccs).to.have.length(1);
    expect(ccs[0]).to.include({ status: 'done', result: 'success', outdial_target_id: targetIds[0] });
    const idle = await t1.ctx.db('outdialtargets').whereIn('id', targetIds.slice(1));
    for (const tg of idle) expect(tg).to.include({ status: 'idle', try_count_0: 0 });
    const types = (await awaitEvents(p.redis, campaign.id, 4)).map((e) => e.event_type);
    expect(types).to.deep.equal(['campaign_created', 'campaign_status_run', 'campaign_status_stopping', 'campaign_status_stop']);
  });
});
