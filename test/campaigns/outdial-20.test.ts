// The test: an outdial of 20 tel targets run by a campaign with retries, through the real
// stack (two control-api copies each running the runner, BullMQ originates, media-app, sip-server)
// to one sipp gateway behind a provider + route that answers, is busy (486), never answers, or
// declines (603) per dialled number. Every campaigncall's result, reason and try count must match
// what its target did; retries wait the outplan's interval for their outcome; events go out once.
import { expect } from 'chai';
import { createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { truncateAll } from '../../testkit/db';
import { sleep, until, type Platform } from '../../testkit/media-app/harness';
import { api, eventsSince, useCampaignStack } from './support';
import { SOURCE_NUMBER, numberFor, startGateway, type Behaviour } from './gateway';

interface Cc {
  id: string;
  status: string;
  result: string;
  result_reason: string;
  amd_result: string;
  outdial_target_id: string;
  destination_index: number;
  try_count: number;
  reference_id: string;
  tm_create: string;
  tm_update: string;
}

const ms = (legacy: string) => Date.parse(legacy.replace(' ', 'T') + 'Z');

describe('campaigns: an outdial of 20 sipp targets with retries', function () {
  this.timeout(120_000);
  let p: Platform;
  let t1: TestApp;
  let f: Fixture;

  useCampaignStack(
    2,
    {},
    (s) =>
      ({
        p,
        apps: [t1],
      } = s),
  );
  before(async () => {
    await truncateAll(t1.ctx.db);
    f = await createFixture(t1.ctx);
  });

  it('answer, busy, no answer, decline and busy-then-second-number targets: results, reasons, tries and intervals match', async () => {
    const a = api(t1, f);
    const since = Date.now() - 1000;
    const ok = async (r: Promise<{ status: number; body: any }>) => {
      const res = await r;
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body;
    };
    // 8 answer, 4 busy, 3 never answer, 2 decline, 3 busy on destination_0 and answer on destination_1
    const kinds: (Behaviour | 'busy-then-answer')[] = [
      ...Array<Behaviour>(8).fill('answer'),
      ...Array<Behaviour>(4).fill('busy'),
      ...Array<Behaviour>(3).fill('noanswer'),
      ...Array<Behaviour>(2).fill('decline'),
      ...Array<'busy-then-answer'>(3).fill('busy-then-answer'),
    ];
    const invites = 8 + 4 * 2 + 3 * 2 + 2 * 2 + 3 * 3;
    const gw = await startGateway(t1, f, invites);

    const dialTimeout = 2500;
    const plan = {
      source: { type: 'tel', target: SOURCE_NUMBER },
      dial_timeout: dialTimeout,
      try_interval: 20_000,
      try_interval_busy: 400,
      try_interval_noanswer: 300,
      try_interval_failed: 20_000,
      max_try_count_0: 2,
      max_try_count_1: 1,
    };
    const outplan = await ok(a.post('/outplans', { name: 'retries', ...plan }));
    expect(outplan).to.include({ try_interval_busy: 400, try_interval_noanswer: 300, try_interval_machine: null, timezone: 'UTC' });
    const outdial = await ok(a.post('/outdials', { name: '20 targets' }));
    const targetIds: string[] = [];
    for (const [i, k] of kinds.entries()) {
      const body =
        k === 'busy-then-answer'
          ? { destination_0: { type: 'tel', target: numberFor('busy', 100 + i) }, destination_1: { type: 'tel', target: numberFor('answer', 100 + i) } }
          : { destination_0: { type: 'tel', target: numberFor(k, i) } };
      targetIds.push((await ok(a.post(`/outdials/${outdial.id}/targets`, { name: `${k}-${i}`, ...body }))).id);
    }
    const campaign = await ok(
      a.post('/campaigns', {
        name: 'outdial-20',
        outplan_id: outplan.id,
        outdial_id: outdial.id,
        service_level: 8,
        actions: [{ type: 'sleep', option: { duration: 300 } }, { type: 'hangup' }],
      }),
    );

    const started = Date.now();
    await ok(a.put(`/campaigns/${campaign.id}/status`, { status: 'run' }));
    try {
      await until(async () => (await ok(a.get(`/campaigns/${campaign.id}`))).status === 'stop', 60_000, 'campaign stop');
    } catch (err) {
      const rows = await t1.ctx.db('campaigncalls').where({ campaign_id: campaign.id }).select('status', 'result', 'result_reason', 'destination');
      throw new Error(`${String(err)}: ${JSON.stringify(rows.map((r) => [r.destination.target, r.status, r.result_reason]))}`);
    }
    const wall = Date.now() - started;
    const sippResult = await Promise.race([gw.done, sleep(15_000).then(() => null)]);
    expect(sippResult, 'sipp took every INVITE and ended').to.not.equal(null);
    if (!sippResult) return;
    expect(sippResult.code, sippResult.errors).to.equal(0);
    expect(sippResult.messages.match(/^INVITE sip:/gm)).to.have.length(invites);

    const ccs: Cc[] = [];
    let token = '';
    do {
      const page = await ok(a.get(`/campaigns/${campaign.id}/campaigncalls`, { page_size: '100', ...(token ? { page_token: token } : {}) }));
      ccs.push(...page.result);
      token = page.next_page_token ?? '';
    } while (token && ccs.length < 100);
    ccs.sort((x, y) => ms(x.tm_create) - ms(y.tm_create));
    expect(ccs).to.have.length(invites);
    const calls = new Map(
      (
        await t1.ctx.db('calls').whereIn(
          'id',
          ccs.map((c) => c.reference_id),
        )
      ).map((c) => [c.id, c]),
    );

    const expected: Record<string, [number, number, string, string][]> = {
      answer: [[0, 1, 'success', 'answered']],
      busy: [
        [0, 1, 'fail', 'busy'],
        [0, 2, 'fail', 'busy'],
      ],
      noanswer: [
        [0, 1, 'fail', 'noanswer'],
        [0, 2, 'fail', 'noanswer'],
      ],
      // a 603 is "noanswer" (VoIPbin's hangup mapping); it ends at once instead of at the dial timeout
      decline: [
        [0, 1, 'fail', 'noanswer'],
        [0, 2, 'fail', 'noanswer'],
      ],
      'busy-then-answer': [
        [0, 1, 'fail', 'busy'],
        [0, 2, 'fail', 'busy'],
        [1, 1, 'success', 'answered'],
      ],
    };
    const interval: Record<string, number> = { busy: 400, noanswer: 300 };
    for (const [i, k] of kinds.entries()) {
      const mine = ccs.filter((c) => c.outdial_target_id === targetIds[i]);
      expect(
        mine.map((c) => [c.destination_index, c.try_count, c.result, c.result_reason]),
        `${k}-${i}`,
      ).to.deep.equal(expected[k]);
      for (const c of mine) {
        expect(c.status).to.equal('done');
        const call = calls.get(c.reference_id)!;
        expect(call.status).to.equal('hangup');
        const took = call.tm_hangup!.getTime() - call.tm_create.getTime();
        if (k === 'noanswer') expect(took, 'no answer lasts the dial timeout').to.be.at.least(dialTimeout - 200);
        if (k === 'decline') expect(took, 'a decline ends at once').to.be.below(dialTimeout - 500);
      }
      // each retry waited its outcome's interval (not the 20 s try_interval)
      for (let j = 1; j < mine.length; j++) {
        const gap = ms(mine[j]!.tm_create) - ms(mine[j - 1]!.tm_update);
        expect(gap, `${k}-${i} retry ${j}`)
          .to.be.at.least(interval[mine[j - 1]!.result_reason]! - 50)
          .and.below(10_000);
      }
    }
    const tgts = new Map((await t1.ctx.db('outdialtargets').whereIn('id', targetIds)).map((t) => [t.id, t]));
    for (const [i, k] of kinds.entries()) {
      const tries = expected[k]!;
      expect(tgts.get(targetIds[i]!), `${k}-${i}`).to.include({
        status: 'done',
        try_count_0: tries.filter((x) => x[0] === 0).length,
        try_count_1: tries.filter((x) => x[0] === 1).length,
      });
    }

    // events: each change once, whichever copy made it
    // published right after the commit that stopped the campaign: wait for the last one to land
    const events = await until(
      async () => {
        const e = await eventsSince(p.redis, since);
        return (e.get(campaign.id) ?? []).length >= 3 ? e : null;
      },
      5000,
      'campaign_status_stop',
    );
    expect((events.get(campaign.id) ?? []).map((e) => e.event_type)).to.deep.equal(['campaign_created', 'campaign_status_run', 'campaign_status_stop']);
    for (const c of ccs) {
      const evs = events.get(c.id) ?? [];
      const answered = c.result === 'success';
      expect(evs.map((e) => e.event_type)).to.deep.equal(['campaigncall_created', ...(answered ? ['campaigncall_updated'] : []), 'campaigncall_updated']);
      expect(evs.map((e) => e.data.status)).to.deep.equal(['dialing', ...(answered ? ['progressing'] : []), 'done']);
      expect(evs.at(-1)!.data).to.include({ result: c.result, result_reason: c.result_reason });
    }
    expect(wall, 'bounded wall time').to.be.below(60_000);
  });
});
