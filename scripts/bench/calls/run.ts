/**
 * Calls benchmark: the whole call plane on loopback (sip-server + media-app + Postgres + Redis +
 * BullMQ), sipp as the far end.
 *   source .data/env && npx tsx scripts/bench/calls/run.ts [--calls 300] [--concurrent 150] [--rate 50]
 * 1. baseline: a bare drachtio-srf createUAC loop through the same sip-server to the same sipp UAS
 *    (no database, queue, media or flow): calls/s the signalling path alone sustains here.
 * 2. originate: Call rows written as control-api would, one originate command each through BullMQ at
 *    --rate per second; flow = hangup. Calls/s completed, and post-dial delay = command enqueued →
 *    180 Ringing received (the row's tm_ringing; the INVITE left a little before that).
 * 3. concurrent prompts: --concurrent answered calls, each playing a spoken prompt (talk), held
 *    together; how many were up at once, and the media workers' packet lateness while they played.
 */
process.env.LOG_LEVEL ??= 'silent';
import { Redis } from 'ioredis';
import { parseActions } from '../../../core/flow';
import { flowsRepo } from '../../../core/repos/flows';
import { callsRepo } from '../../../core/repos/calls';
import { repos } from '../../../core/repos';
import { CommandBus } from '../../../core/commands/bus';
import { testDb } from '../../../testkit/db';
import { freePort } from '../../../testkit/ports';
import { startPlatform, sipp, type Platform } from '../../../testkit/media-app/harness';
import type { Knex } from 'knex';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const CALLS = arg('calls', 300);
const CONCURRENT = arg('concurrent', 150);
const RATE = arg('rate', 50);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
const SDP = 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 9 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n';

type Rig = { p: Platform; db: Knex; bus: CommandBus; cid: string };

async function main(): Promise<void> {
  const p = await startPlatform({ RTP_PORT_MIN: '40000', RTP_PORT_MAX: '41999', MEDIA_WORKERS: '2' });
  const db = await testDb();
  const busRedis = new Redis(process.env.TEST_REDIS_URL!);
  const bus = new CommandBus({ redis: busRedis, keyPrefix: p.config.redisKeyPrefix });
  try {
    const baseCps = await baseline(p);
    const cid = (await repos(db).customers.create({ email: `bench${Date.now()}@example.test`, status: 'active', name: 'bench' })).id;
    const rig: Rig = { p, db, bus, cid };
    const o = await originate(rig);
    const c = await concurrentPrompts(rig);
    const cpu = process.cpuUsage();
    const out = {
      baseline_bare_srf_cps: +baseCps.toFixed(1),
      originate: { calls: CALLS, completed: o.completed, normal: o.normal, offered_rate: RATE, cps: +o.cps.toFixed(1), ratio_to_baseline: +(o.cps / baseCps).toFixed(3) },
      post_dial_delay_ms: { p50: pct(o.pdd, 50), p99: pct(o.pdd, 99), max: Math.max(...o.pdd) },
      concurrent_prompts: c,
      cpu_seconds: +((cpu.user + cpu.system) / 1e6).toFixed(1),
    };
    console.log(JSON.stringify(out, null, 2));
  } finally {
    await bus.close();
    busRedis.disconnect();
    await p.close();
    await db.destroy();
  }
}

/** 1. baseline: a bare createUAC loop (20 at a time) through sip-server to a sipp UAS; calls/s. */
async function baseline(p: Platform): Promise<number> {
  const bport = await freePort();
  const b = sipp('', ['-sn', 'uas', '-i', '127.0.0.1', '-p', String(bport), '-m', String(CALLS)], { killAfterMs: 120_000 });
  await sleep(300);
  const t0 = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next < CALLS) {
        next++;
        const d = await p.app.srf.createUAC(`sip:bench@127.0.0.1:${bport}`, { localSdp: SDP });
        await d.destroy();
      }
    }),
  );
  const baseSecs = (Date.now() - t0) / 1000;
  await b.done;
  return CALLS / baseSecs;
}

/** `n` outgoing Call rows of `flowId`, to `<user><i>@127.0.0.1:<port>`, as control-api writes them. */
async function dialingRows(rig: Rig, flowId: string, user: string, port: number, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const row = await callsRepo(rig.db).create({
      customer_id: rig.cid,
      flow_id: flowId,
      direction: 'outgoing',
      status: 'dialing',
      source: { type: 'tel', target: '+15550000000' },
      destination: { type: 'sip', target: `${user}${i}@127.0.0.1:${port}` },
    });
    ids.push(row.id);
  }
  return ids;
}

/** 2. originate through the queue at RATE, flow = hangup: calls/s completed and the post-dial delay. */
async function originate(rig: Rig): Promise<{ completed: number; normal: number; cps: number; pdd: number[] }> {
  const { db, bus, cid } = rig;
  const hangupFlow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'hangup' }]) } as never);
  const oport = await freePort();
  const o = sipp('', ['-sn', 'uas', '-i', '127.0.0.1', '-p', String(oport), '-m', String(CALLS)], { killAfterMs: 180_000 });
  await sleep(300);
  const ids = await dialingRows(rig, hangupFlow.id, 'bench', oport, CALLS);
  const enqueuedAt = new Map<string, number>();
  const t1 = Date.now();
  for (let i = 0; i < ids.length; i++) {
    const due = t1 + (i * 1000) / RATE;
    if (due > Date.now()) await sleep(due - Date.now());
    enqueuedAt.set(ids[i]!, Date.now());
    void bus.originate([ids[i]!], cid);
  }
  let done: { id: string; tm_ringing: Date | null; tm_hangup: Date | null; hangup_reason: string }[] = [];
  for (;;) {
    done = await db('calls').whereIn('id', ids).where({ status: 'hangup' }).select('id', 'tm_ringing', 'tm_hangup', 'hangup_reason');
    if (done.length === ids.length || Date.now() - t1 > 120_000) break;
    await sleep(200);
  }
  const lastHangup = Math.max(...done.map((r) => r.tm_hangup!.getTime()));
  const cps = done.length / ((lastHangup - t1) / 1000);
  const pdd = done.filter((r) => r.tm_ringing).map((r) => r.tm_ringing!.getTime() - enqueuedAt.get(r.id)!);
  const normal = done.filter((r) => r.hangup_reason === 'normal').length;
  await o.done;
  return { completed: done.length, normal, cps, pdd };
}

/** 3. CONCURRENT answered calls each playing a prompt, held together: how many were up, and the workers' lateness. */
async function concurrentPrompts(rig: Rig) {
  const { p, db, bus, cid } = rig;
  const talkFlow = await flowsRepo(db).create({
    customer_id: cid,
    actions: parseActions([{ type: 'talk', option: { text: 'Thank you for holding. Your call is important to us. '.repeat(6), language: 'en-US' } }]),
  } as never);
  // warm the TTS cache with one call's worth of synthesis
  const cport = await freePort();
  const c = sipp('', ['-sn', 'uas', '-i', '127.0.0.1', '-p', String(cport), '-m', String(CONCURRENT)], { killAfterMs: 240_000 });
  await sleep(300);
  const cids = await dialingRows(rig, talkFlow.id, 'hold', cport, CONCURRENT);
  await p.engine().resetStats();
  const t2 = Date.now();
  for (const id of cids) void bus.originate([id], cid);
  let up = 0;
  let peak = 0;
  for (;;) {
    up = Number((await db('calls').whereIn('id', cids).where({ status: 'progressing' }).count({ n: 'id' }))[0]!.n);
    peak = Math.max(peak, up);
    if (up >= CONCURRENT || Date.now() - t2 > 60_000) break;
    await sleep(200);
  }
  const rampSecs = (Date.now() - t2) / 1000;
  await sleep(5000); // all of them playing
  const stats = await p.engine().stats();
  const liveCalls = p.app.calls.size;
  for (const id of cids) void bus.toCallOwner({ type: 'call.hangup', callId: id });
  await c.done;
  return {
    asked: CONCURRENT,
    peak_up: peak,
    live_on_node: liveCalls,
    ramp_seconds: +rampSecs.toFixed(1),
    worker_late_ms: stats.map((s) => ({ p50: s.lateP50, p99: s.lateP99, max: s.lateMax, legs: s.legs })),
  };
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
