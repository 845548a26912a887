/**
 * Queue dispatch latency: how long from a caller entering `waiting` to the agent's INVITE arriving
 * at the agent's address, over a bounded run on the real call plane (sip-server, media-app,
 * Postgres, Redis, sipp as the caller). Same-run baseline: the connect action's dial latency
 * (caller answered → INVITE at the destination), measured alternately with the queue's
 * answered → INVITE, so both share the machine's load.
 *
 *   source .data/env && npx tsx scripts/bench/queue/run.ts [iterations=30]
 *
 * Writes dist/bench/queue.md (git-ignored; the figures go by hand into docs/benchmarks.md).
 */
import { writeReport } from '../report';
import { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { parseActions } from '../../../core/flow';
import { callsRepo } from '../../../core/repos/calls';
import { repos } from '../../../core/repos';
import { agentsRepo } from '../../../core/repos/agents';
import { queuesRepo } from '../../../core/repos/queues';
import { queuecallsRepo } from '../../../core/repos/queuecalls';
import { tagsRepo } from '../../../core/repos/tags';
import { CommandBus } from '../../../core/commands/bus';
import { testDb } from '../../../testkit/db';
import { freePort } from '../../../testkit/ports';
import { killAllSipp, RtpSink, sipp, sleep, startPlatform, until } from '../../../testkit/media-app/harness';
import { callerUas, InviteCounter } from '../../../testkit/queue/sip-parties';

const N = Math.max(5, Math.min(200, Number(process.argv[2]) || 30));

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}
const fmt = (x: number) => x.toFixed(1);

async function main(): Promise<void> {
  const p = await startPlatform({ LOG_LEVEL: 'silent' });
  const db = await testDb();
  const busRedis = new Redis(process.env.TEST_REDIS_URL!, { maxRetriesPerRequest: 2 });
  const bus = new CommandBus({ redis: busRedis, keyPrefix: p.config.redisKeyPrefix });
  const agentSide = await InviteCounter.open({ busy: true });
  // one sink for all the callers' media
  const sink = await RtpSink.open({ many: true });
  const callerPort = await freePort();
  const callerSipp = sipp(callerUas(sink.port), ['-i', '127.0.0.1', '-p', String(callerPort), '-m', String(2 * N), '-timeout', '600s'], { killAfterMs: 600_000 });
  await sleep(300);
  const service = p.app.factory.services.queues!;
  let lastWaiting = 0;
  service.on('waiting', (e: { at: number }) => (lastWaiting = e.at));

  const cid = (await repos(db).customers.create({ email: `bench-q-${Date.now()}@example.test`, status: 'active', name: 'bench' })).id;
  const invite = (user: string) =>
    new Promise<number>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no INVITE for ${user}`)), 15_000);
      agentSide.onInvite = (at, u) => {
        if (u !== user) return;
        clearTimeout(t);
        resolve(at);
      };
    });
  const originate = async (actions: unknown[]) => {
    const row = await callsRepo(db).create({
      customer_id: cid,
      source: { type: 'tel', target: '+15550001111' },
      destination: { type: 'sip', target: `caller@127.0.0.1:${callerPort}` },
      direction: 'outgoing',
      status: 'dialing',
      data: { actions: parseActions(actions) },
    });
    await bus.originate([row.id], cid);
    return row;
  };
  const progressingAt = async (id: string) => (await until(async () => (await callsRepo(db).get(id))?.tm_progressing, 10_000, 'progressing')).getTime();
  const hungUp = (id: string) => until(async () => (await callsRepo(db).get(id))?.status === 'hangup', 15_000, 'hangup');

  const dispatch: number[] = [];
  const queueFromAnswer: number[] = [];
  const connectFromAnswer: number[] = [];
  for (let i = 0; i < N; i++) {
    // queue: a fresh tag, agent and queue each time, so no cool-down or leftover agent interferes
    const { agent, queue } = await freshQueue(db, cid, i, agentSide.port);
    const qInvite = invite(`q${i}`);
    const q = await originate([{ type: 'queue_join', option: { queue_id: queue.id } }]);
    const qAt = await qInvite;
    dispatch.push(qAt - lastWaiting);
    queueFromAnswer.push(qAt - (await progressingAt(q.id)));
    await bus.toCallOwner({ type: 'call.hangup', callId: q.id });
    await hungUp(q.id);
    await queuecallClosed(db, q.id);
    await agentsRepo(db).update(agent.id, { status: 'offline' });

    // baseline: connect to the same kind of destination
    const cInvite = invite(`c${i}`);
    const c = await originate([{ type: 'connect', option: { destinations: [{ type: 'sip', target: `c${i}@127.0.0.1:${agentSide.port}` }] } }, { type: 'hangup' }]);
    const cAt = await cInvite;
    connectFromAnswer.push(cAt - (await progressingAt(c.id)));
    await hungUp(c.id);
  }
  const open = await queuecallsRepo(db).list(cid, { pageSize: 100, pageToken: '' }, { status: 'waiting' });

  report({ dispatch, queueFromAnswer, connectFromAnswer }, open.result.length);

  killAllSipp();
  await callerSipp.done.catch(() => undefined);
  agentSide.close();
  sink.close();
  await bus.close();
  busRedis.disconnect();
  await p.close();
  await db.destroy();
}

/** A fresh tag, an available agent with it at the agent side's address, and a queue on the tag. */
async function freshQueue(db: Knex, cid: string, i: number, agentPort: number) {
  const tag = await tagsRepo(db).create(cid, { name: `t${i}` });
  if (tag === 'duplicate') throw new Error('tag');
  const agent = await agentsRepo(db).create({
    customer_id: cid,
    username: `bench-${Date.now()}-${i}@example.test`,
    permission: 16,
    status: 'available',
    tag_ids: [tag.id],
    addresses: [{ type: 'sip', target: `q${i}@127.0.0.1:${agentPort}` }],
  });
  const queue = await queuesRepo(db).create(cid, { name: `q${i}`, tag_ids: [tag.id] });
  return { agent, queue };
}

/** The call's queuecall is closed (abandoned or done). */
function queuecallClosed(db: Knex, callId: string): Promise<unknown> {
  return until(
    async () => {
      const qc = await db('queuecalls').where({ reference_id: callId }).first();
      return qc && (qc.status === 'abandoned' || qc.status === 'done');
    },
    10_000,
    'queuecall closed',
  );
}

/** The figures against the connect baseline, printed and written to the report. */
function report(m: { dispatch: number[]; queueFromAnswer: number[]; connectFromAnswer: number[] }, leftWaiting: number): void {
  const { dispatch, queueFromAnswer, connectFromAnswer } = m;
  const row = (name: string, xs: number[]) => `| ${name} | ${xs.length} | ${fmt(pct(xs, 50))} | ${fmt(pct(xs, 99))} | ${fmt(Math.max(...xs))} |`;
  const ratio50 = pct(queueFromAnswer, 50) / pct(connectFromAnswer, 50);
  const ratio99 = pct(queueFromAnswer, 99) / pct(connectFromAnswer, 99);
  const md = `# Queue dispatch latency

Command: \`source .data/env && npx tsx scripts/bench/queue/run.ts ${N}\` (${new Date().toISOString().slice(0, 10)}, ${process.platform}, node ${process.version}).

The whole call plane runs on loopback in one process (sip-server, media-app with one media worker,
Postgres and Redis of the machine); sipp answers as the caller; the agent side is a UDP socket that
timestamps each INVITE and answers 486. Iterations are sequential; the queue and the baseline
alternate, so both see the same load.

| measure (ms) | n | p50 | p99 | max |
|---|---|---|---|---|
${row('queue dispatch: queuecall waiting → agent INVITE received', dispatch)}
${row('queue: caller answered → agent INVITE received', queueFromAnswer)}
${row('baseline, connect action: caller answered → INVITE received', connectFromAnswer)}

Ratio queue / connect (caller answered → INVITE): p50 ${ratio50.toFixed(2)}, p99 ${ratio99.toFixed(2)}.

The dispatch itself (claiming an agent: one guarded UPDATE; the connecting write; the leg's Call row)
adds a few Postgres round trips to what connect does; queue_join also writes the queuecall
(created, waiting) before dispatch starts. Callers left waiting at the end: ${leftWaiting}.
`;
  writeReport('queue', md);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    killAllSipp();
    process.exit(1);
  },
);
