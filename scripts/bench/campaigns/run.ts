/**
 * Campaign dial-rate benchmark: the whole call plane on loopback (sip-server + media-app + Postgres +
 * Redis + BullMQ) with a sipp UAS as every target; each call answers and runs `hangup`.
 *   source .data/env && npx tsx scripts/bench/campaigns/run.ts [--calls 100] [--level 20]
 * 1. baseline: POST /calls, one destination each, from --level concurrent clients: calls/s from the
 *    first request to the last call's hangup.
 * 2. campaign: an outdial of --calls sip targets run at service_level --level, runner pass every
 *    500 ms (the default) and every 100 ms: calls/s from PUT status run to the campaign's stop;
 * 3. the 100 ms run again with dial windows and agent pacing (a queue of --level available agents).
 * Writes dist/bench/campaigns.md (git-ignored) with the ratio campaign / POST /calls; the figures go by
 * hand into docs/benchmarks.md.
 */
process.env.LOG_LEVEL ??= 'silent';
import fs from 'node:fs';
import { reportPath } from '../report';
import os from 'node:os';
import request from 'supertest';
import { buildTestApp, createAgent, createFixture, type TestApp } from '../../../testkit/api';
import { newId } from '../../../core/ids';
import { queuesRepo } from '../../../core/repos/queues';
import { freePort } from '../../../testkit/ports';
import { startPlatform, sipp } from '../../../testkit/media-app/harness';
import { closeCommandBus } from '../../../control-api/calls/bus';
import { CampaignRunner } from '../../../control-api/campaigns/runner';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const CALLS = arg('calls', 100);
const LEVEL = arg('level', 20);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What every phase dials with: the app, the customer's access key, the sipp UAS's port, the customer's live calls. */
interface Rig {
  t: TestApp;
  q: { accesskey: string };
  port: number;
  live: () => Promise<number>;
}

type Variant = { tickMs: number; label: string; plan: Record<string, unknown>; campaign: { service_level: number; queue_id?: string } };

async function main(): Promise<void> {
  const p = await startPlatform({ RTP_PORT_MIN: '42000', RTP_PORT_MAX: '43999' });
  const t = await buildTestApp({ env: { REDIS_KEY_PREFIX: p.config.redisKeyPrefix, RATE_LIMIT_SCALE: '0' } });
  const f = await createFixture(t.ctx);
  const port = await freePort();
  const uas = sipp('', ['-sn', 'uas', '-i', '127.0.0.1', '-p', String(port), '-m', String(CALLS * 4), '-timeout', '600s'], { killAfterMs: 600_000 });
  await uas.port;
  await sleep(300);
  const db = t.ctx.db;
  const live = async () => Number((await db('calls').where({ customer_id: f.customer.id }).whereNot({ status: 'hangup' }).count<{ c: string }[]>('id as c'))[0]!.c);
  const rig: Rig = { t, q: { accesskey: f.accesskey }, port, live };
  const lines: string[] = [];
  try {
    // 1. baseline
    const baseRate = await baseline(rig);
    lines.push(`| POST /calls, ${LEVEL} concurrent clients (baseline) | ${baseRate.toFixed(1)} | 1.00 |`);

    // 2. campaigns
    // 3. the same at 100 ms with a dial plan (windows open all week in Europe/Paris) and agent pacing
    //    (a queue with LEVEL available agents at service_level 100): the cost of the pacer's queries.
    const queue = await agentQueue(t, f.customer.id);
    const allWeek = [{ days: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'], start: '00:00', end: '24:00' }];
    const variants: Variant[] = [
      { tickMs: 500, label: '', plan: {}, campaign: { service_level: LEVEL } },
      { tickMs: 100, label: '', plan: {}, campaign: { service_level: LEVEL } },
      {
        tickMs: 100,
        label: `, dial windows + queue of ${LEVEL} available agents at 100 %`,
        plan: { timezone: 'Europe/Paris', dial_windows: allWeek },
        campaign: { service_level: 100, queue_id: queue.id },
      },
    ];
    for (const v of variants) {
      const { rate, ok, maxLive } = await campaignRun(rig, v);
      lines.push(
        `| campaign, service_level ${v.campaign.service_level}, runner pass ${v.tickMs} ms${v.label} (${ok}/${CALLS} success, at most ${maxLive} up) | ${rate.toFixed(1)} | ${(rate / baseRate).toFixed(2)} |`,
      );
    }
  } finally {
    await closeCommandBus(t.ctx);
    await t.close();
    await p.close();
  }
  report(lines);
  process.exit(0);
}

/** POST /calls from LEVEL concurrent clients until CALLS, then until none is up: calls/s. */
async function baseline({ t, q, port, live }: Rig): Promise<number> {
  const t0 = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: LEVEL }, async () => {
      while (next < CALLS) {
        const n = next++;
        const r = await request(t.app)
          .post('/v1.0/calls')
          .query(q)
          .send({ source: { type: 'sip', target: 'bench@sip.test' }, destinations: [{ type: 'sip', target: `b${n}@127.0.0.1:${port}` }], actions: [{ type: 'hangup' }] });
        if (r.status !== 200) throw new Error(`POST /calls ${r.status} ${JSON.stringify(r.body)}`);
      }
    }),
  );
  while ((await live()) > 0) await sleep(20);
  return CALLS / ((Date.now() - t0) / 1000);
}

/** A queue with LEVEL available agents (the agent-pacing variant). */
async function agentQueue(t: TestApp, customerId: string) {
  const db = t.ctx.db;
  const agentTag = newId();
  await db('tags').insert({ id: agentTag, customer_id: customerId, name: 'bench', detail: '', tm_create: new Date() });
  const queue = await queuesRepo(db).create(customerId, { name: 'bench', tag_ids: [agentTag] });
  for (let i = 0; i < LEVEL; i++) {
    const { agent } = await createAgent(t.ctx, customerId, 1);
    await db('agents')
      .where({ id: agent.id })
      .update({ status: 'available', tag_ids: JSON.stringify([agentTag]), addresses: JSON.stringify([{ type: 'tel', target: '+15550009999' }]) });
  }
  return queue;
}

/** One campaign of CALLS targets run to its stop by a runner passing every `tickMs`: calls/s, successes, most calls up at once. */
async function campaignRun({ t, q, port, live }: Rig, v: Variant): Promise<{ rate: number; ok: number; maxLive: number }> {
  const runner = new CampaignRunner(t.ctx, { tickMs: v.tickMs });
  runner.start();
  const plan = (
    await request(t.app)
      .post('/v1.0/outplans')
      .query(q)
      .send({ source: { type: 'sip', target: 'bench@sip.test' }, try_interval: 0, ...v.plan })
  ).body;
  const od = (await request(t.app).post('/v1.0/outdials').query(q).send({ name: 'bench' })).body;
  for (let n = 0; n < CALLS; n++) {
    await request(t.app)
      .post(`/v1.0/outdials/${od.id}/targets`)
      .query(q)
      .send({ destination_0: { type: 'sip', target: `c${n}@127.0.0.1:${port}` } });
  }
  const c = (
    await request(t.app)
      .post('/v1.0/campaigns')
      .query(q)
      .send({ ...v.campaign, outplan_id: plan.id, outdial_id: od.id, actions: [{ type: 'hangup' }] })
  ).body;
  let maxLive = 0;
  const t1 = Date.now();
  await request(t.app).put(`/v1.0/campaigns/${c.id}/status`).query(q).send({ status: 'run' });
  for (;;) {
    maxLive = Math.max(maxLive, await live());
    const s = (await request(t.app).get(`/v1.0/campaigns/${c.id}`).query(q)).body.status;
    if (s === 'stop') break;
    if (Date.now() - t1 > 300_000) throw new Error('campaign did not finish in 5 minutes');
    await sleep(25);
  }
  const rate = CALLS / ((Date.now() - t1) / 1000);
  await runner.stop();
  const ok = Number((await t.ctx.db('campaigncalls').where({ campaign_id: c.id, result: 'success' }).count<{ c: string }[]>('id as c'))[0]!.c);
  return { rate, ok, maxLive };
}

function report(lines: string[]): void {
  const cmd = `source .data/env && npx tsx scripts/bench/campaigns/run.ts --calls ${CALLS} --level ${LEVEL}`;
  const md = [
    '# Campaign dialling',
    '',
    `Command: \`${cmd}\` (${os.cpus().length} cores, shared). Whole call plane on loopback, a sipp UAS as every`,
    'target, each call answered and hung up by its flow (`hangup`). Calls/s = calls ÷ time from the first',
    "request (or PUT status run) to the last hangup (or the campaign's stop). Ratio against POST /calls in the same run.",
    '',
    '| path | calls/s | ratio |',
    '|---|---|---|',
    ...lines,
    '',
    'The runner places up to service_level calls per pass and sees a call end on its next pass, so with',
    'short calls its rate is bounded by service_level ÷ (call length + pass interval). The last row adds the',
    'dial plan and agent-pacing queries (windows, available agents, attempts waiting for one) to every step.',
    '',
  ].join('\n');
  const out = reportPath('campaigns');
  fs.writeFileSync(out, md);
  process.stdout.write(md);
  console.log(`wrote ${out}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
