// Queues end to end: a caller (sipp UAS answering an originated call whose flow is queue_join)
// waits with wait audio on its RTP, the dispatcher rings the one available agent with the queue's
// tags (sipp UAS), bridges it, and closes the queuecall; busy, away and untagged agents are never
// rung; wait_timeout and kick send the caller on to the next action.
import { hungUpCall } from '../../testkit/call-ends';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { callsRepo } from '../../core/repos/calls';
import { repos } from '../../core/repos';
import { agentsRepo, type AgentStatus } from '../../core/repos/agents';
import { queuesRepo } from '../../core/repos/queues';
import { queuecallsRepo, type QueuecallRow } from '../../core/repos/queuecalls';
import { tagsRepo } from '../../core/repos/tags';
import { CommandBus } from '../../core/commands/bus';
import { testDb, truncateAll } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { answeringUas, eventsFor, killAllSipp, RtpSink, sipp, sleep, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { callerUas, InviteCounter } from '../../testkit/queue/sip-parties';

describe('queue: dispatch to agents (sipp)', function () {
  this.timeout(120_000);
  let p: Platform;
  let bus: CommandBus;
  let busRedis: Redis;
  let counter: InviteCounter;
  const sinks: RtpSink[] = [];

  before(async () => {
    await truncateAll();
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
    busRedis = new Redis(process.env.TEST_REDIS_URL!, { maxRetriesPerRequest: 2 });
    bus = new CommandBus({ redis: busRedis, keyPrefix: p.config.redisKeyPrefix });
    counter = await InviteCounter.open();
  });
  after(async () => {
    killAllSipp();
    for (const s of sinks) s.close();
    counter?.close();
    await bus?.close();
    busRedis?.disconnect();
    await p?.close();
  });

  let seq = 0;
  async function customer() {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `q${process.pid}-${++seq}@example.test`, status: 'active', name: 'q' })).id;
    const tag = await tagsRepo(db).create(cid, { name: 'sales' });
    if (tag === 'duplicate') throw new Error('tag');
    return { db, cid, tagId: tag.id };
  }

  async function agent(cid: string, status: AgentStatus, tagIds: string[], target: string) {
    const db = await testDb();
    return agentsRepo(db).create({
      customer_id: cid,
      username: `ag${++seq}-${Date.now()}@example.test`,
      permission: 16,
      status,
      tag_ids: tagIds,
      addresses: [{ type: 'sip', target }],
    });
  }

  /** Originates the caller: its flow is `actions`; returns the call row and the RTP sink hearing it. */
  async function caller(cid: string, actions: unknown[]) {
    const db = await testDb();
    const sink = await RtpSink.open();
    sinks.push(sink);
    const port = await freePort();
    const uas = sipp(callerUas(sink.port), ['-i', '127.0.0.1', '-p', String(port), '-m', '1'], { killAfterMs: 60_000 });
    const row = await callsRepo(db).create({
      customer_id: cid,
      source: { type: 'tel', target: '+15550001111' },
      destination: { type: 'sip', target: `caller@127.0.0.1:${port}` },
      direction: 'outgoing',
      status: 'dialing',
      data: { actions: parseActions(actions) },
    });
    await sleep(200); // sipp listening
    await bus.originate([row.id], cid);
    return { row, sink, uas };
  }

  const queuecallOf = (db: Awaited<ReturnType<typeof testDb>>, callId: string) =>
    until(async () => ((await db('queuecalls').where({ reference_id: callId }).first()) as QueuecallRow | undefined) ?? null, 15_000, 'queuecall');

  it('hands the caller to the available agent while the caller hears wait audio; busy, away and untagged agents are skipped', async () => {
    const { db, cid, tagId } = await customer();
    const busy = await agent(cid, 'busy', [tagId], `busy@127.0.0.1:${counter.port}`);
    const away = await agent(cid, 'away', [tagId], `away@127.0.0.1:${counter.port}`);
    const untagged = await agent(cid, 'available', [], `untagged@127.0.0.1:${counter.port}`);
    const agentPort = await freePort();
    const free = await agent(cid, 'available', [tagId], `free@127.0.0.1:${agentPort}`);
    const agentUas = sipp(answeringUas({ pauseMs: 2500 }), ['-i', '127.0.0.1', '-p', String(agentPort), '-m', '1'], { killAfterMs: 60_000 });
    const hold = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'talk', option: { text: 'All of our agents are busy. Please stay on the line.', language: 'en-US' } }]),
    } as never);
    const queue = await queuesRepo(db).create(cid, { name: 'sales', tag_ids: [tagId], wait_flow_id: hold.id, service_timeout: 1500 });
    const { row, sink, uas } = await caller(cid, [{ type: 'queue_join', option: { queue_id: queue.id } }, { type: 'hangup' }]);

    const qc = await queuecallOf(db, row.id);
    await until(async () => (await queuecallsRepo(db).get(null, qc.id))?.status === 'connecting', 15_000, 'connecting');
    expect((await agentsRepo(db).get(free.id))!.status).to.equal('ringing');
    // the agent has not answered yet (2.5 s pause): the caller hears the wait audio
    await until(() => sink.voiced > 25, 10_000, 'wait audio on the caller');
    const service = await until(
      async () => {
        const q = await queuecallsRepo(db).get(null, qc.id);
        return q?.status === 'service' ? q : null;
      },
      15_000,
      'service',
    );
    expect(service.service_agent_id).to.equal(free.id);
    expect(service.duration_waiting).to.be.greaterThan(2000);
    expect((await agentsRepo(db).get(free.id))!.status).to.equal('busy');
    // the wait audio stopped when the agent answered (the agent's sipp sends no audio)
    const voicedAtService = sink.voiced;
    await sleep(800);
    expect(sink.voiced - voicedAtService).to.be.lessThan(10);

    // service_timeout ends the service; the flow goes on (hangup)
    const done = await until(
      async () => {
        const q = await queuecallsRepo(db).get(null, qc.id);
        return q?.status === 'done' ? q : null;
      },
      15_000,
      'done',
    );
    expect(done.duration_service).to.be.greaterThan(1000);
    expect((await agentUas.done).code).to.equal(0);
    expect((await uas.done).code).to.equal(0);
    await until(async () => (await agentsRepo(db).get(free.id))!.status === 'available', 5000, 'agent available again');
    expect((await agentsRepo(db).get(busy.id))!.status).to.equal('busy');
    expect((await agentsRepo(db).get(away.id))!.status).to.equal('away');
    expect((await agentsRepo(db).get(untagged.id))!.status).to.equal('available');
    expect(counter.count, counter.users.join(',')).to.equal(0);

    expect((await eventsFor(p.redis, qc.id)).map((e) => e.event_type)).to.deep.equal(['queuecall_created', 'queuecall_waiting', 'queuecall_connecting', 'queuecall_serviced', 'queuecall_done']);
    const statuses = (await eventsFor(p.redis, free.id)).map((e) => (e.data as { status: string }).status);
    expect(statuses).to.deep.equal(['ringing', 'busy', 'available']);
    const q = await queuesRepo(db).get(cid, queue.id);
    expect(q).to.include({ total_incoming_count: 1, total_serviced_count: 1, total_abandoned_count: 0 });
    // the agent leg is chained to the caller
    const legs = (await db('calls').where({ master_call_id: row.id })) as { destination: { target: string } }[];
    expect(legs.map((l) => l.destination.target)).to.deep.equal([`free@127.0.0.1:${agentPort}`]);
  });

  it('the caller is in service only once its agent is busy: one write, read by nobody half done', async () => {
    const { db, cid, tagId } = await customer();
    const agentPort = await freePort();
    const free = await agent(cid, 'available', [tagId], `free@127.0.0.1:${agentPort}`);
    const agentUas = sipp(answeringUas({ pauseMs: 2500 }), ['-i', '127.0.0.1', '-p', String(agentPort), '-m', '1'], { killAfterMs: 60_000 });
    const queue = await queuesRepo(db).create(cid, { name: 'sales', tag_ids: [tagId], service_timeout: 1500 });
    const { row, uas } = await caller(cid, [{ type: 'queue_join', option: { queue_id: queue.id } }, { type: 'hangup' }]);
    const qc = await queuecallOf(db, row.id);
    await until(async () => (await queuecallsRepo(db).get(null, qc.id))?.status === 'connecting', 15_000, 'connecting');
    // the test holds the agent's row: the platform's write of "busy" waits on it when the agent answers
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = db.transaction(async (trx) => {
      await trx('agents').where({ id: free.id }).forUpdate().first();
      locked();
      await released;
    });
    try {
      // (a lock that failed ends the wait with its error)
      await Promise.race([isLocked, holder]);
      const waiting = () =>
        db.raw(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'update "agents"%'`) as Promise<{
          rows: { n: number }[];
        }>;
      await until(async () => ((await waiting()).rows[0]!.n > 0 ? true : null), 15_000, 'the agent answered: its status write waits on the lock');
      // while the agent's row cannot be written, nobody reads the caller as served by a ringing agent
      expect((await queuecallsRepo(db).get(null, qc.id))!.status).to.equal('connecting');
      expect((await agentsRepo(db).get(free.id))!.status).to.equal('ringing');
    } finally {
      release();
      await holder;
    }
    const service = await until(
      async () => {
        const q = await queuecallsRepo(db).get(null, qc.id);
        return q?.status === 'service' || q?.status === 'done' ? q : null;
      },
      15_000,
      'service',
    );
    expect(service.service_agent_id).to.equal(free.id);
    await until(async () => ((await queuecallsRepo(db).get(null, qc.id))?.status === 'done' ? true : null), 15_000, 'done');
    expect((await agentUas.done).code).to.equal(0);
    expect((await uas.done).code).to.equal(0);
    await until(async () => (await agentsRepo(db).get(free.id))!.status === 'available', 5000, 'agent available again');
  });

  it('an agent who does not answer goes back to available and the caller back to waiting', async () => {
    const { db, cid, tagId } = await customer();
    const agentPort = await freePort();
    const a = await agent(cid, 'available', [tagId], `nobody@127.0.0.1:${agentPort}`);
    const agentUas = sipp(answeringUas({ final: 486 }), ['-i', '127.0.0.1', '-p', String(agentPort), '-m', '1'], { killAfterMs: 30_000 });
    const queue = await queuesRepo(db).create(cid, { name: 'q', tag_ids: [tagId], wait_timeout: 4000 });
    const { row } = await caller(cid, [{ type: 'queue_join', option: { queue_id: queue.id } }, { type: 'hangup' }]);
    const qc = await queuecallOf(db, row.id);
    expect((await agentUas.done).code).to.equal(0);
    const end = await until(
      async () => {
        const q = await queuecallsRepo(db).get(null, qc.id);
        return q?.status === 'abandoned' ? q : null;
      },
      15_000,
      'abandoned after the wait timeout',
    );
    expect(end.service_agent_id).to.equal('00000000-0000-0000-0000-000000000000');
    const types = (await eventsFor(p.redis, qc.id)).map((e) => e.event_type);
    expect(types.slice(0, 4)).to.deep.equal(['queuecall_created', 'queuecall_waiting', 'queuecall_connecting', 'queuecall_waiting']);
    expect(types[types.length - 1]).to.equal('queuecall_abandoned');
    expect((await agentsRepo(db).get(a.id))!.status).to.equal('available');
  });

  it('wait_timeout abandons the queuecall and the flow goes on with the next action', async () => {
    const { db, cid, tagId } = await customer();
    const queue = await queuesRepo(db).create(cid, { name: 'empty', tag_ids: [tagId], wait_timeout: 3000 });
    const started = Date.now();
    const { row, uas, sink } = await caller(cid, [{ type: 'queue_join', option: { queue_id: queue.id } }, { type: 'variable_set', option: { key: 'after', value: 'yes' } }, { type: 'hangup' }]);
    const qc = await queuecallOf(db, row.id);
    expect((await uas.done).code).to.equal(0);
    const elapsed = Date.now() - started;
    expect(elapsed).to.be.greaterThan(3000);
    const end = (await queuecallsRepo(db).get(null, qc.id))!;
    expect(end.status).to.equal('abandoned');
    expect(end.duration_waiting).to.be.within(2800, 8000);
    expect(sink.voiced, `packets ${sink.packets}`).to.be.greaterThan(5); // the default ringback while waiting
    const call = await hungUpCall(row.id, 5000);
    const af = await db('activeflows').where({ id: call.activeflow_id }).first();
    const types = (af!.executed_actions as { type: string }[]).map((a) => a.type);
    expect(types).to.deep.equal(['queue_join', 'variable_set', 'hangup']);
    expect((await queuesRepo(db).get(cid, queue.id))!.total_abandoned_count).to.equal(1);
  });

  it('a kick command takes the caller out of the queue; an unknown queue fails the flow', async () => {
    const { db, cid, tagId } = await customer();
    const queue = await queuesRepo(db).create(cid, { name: 'kick', tag_ids: [tagId] });
    const { row, uas } = await caller(cid, [{ type: 'queue_join', option: { queue_id: queue.id } }, { type: 'hangup' }]);
    const qc = await queuecallOf(db, row.id);
    await until(async () => (await queuecallsRepo(db).get(null, qc.id))?.status === 'waiting', 10_000, 'waiting');
    await bus.toCallOwner({ type: 'queuecall.kick', callId: row.id, queuecallId: qc.id });
    expect((await uas.done).code).to.equal(0);
    const types = (await eventsFor(p.redis, qc.id)).map((e) => e.event_type);
    expect(types).to.deep.equal(['queuecall_created', 'queuecall_waiting', 'queuecall_abandoned']);

    const missing = await caller(cid, [{ type: 'queue_join', option: { queue_id: '11111111-2222-3333-4444-555555555555' } }]);
    expect((await missing.uas.done).code).to.equal(0);
    const c = await until(
      async () => {
        const x = await callsRepo(db).get(missing.row.id);
        return x?.status === 'hangup' ? x : null;
      },
      10_000,
      'hangup',
    );
    const af = await db('activeflows').where({ id: c.activeflow_id }).first();
    expect(JSON.stringify(af)).to.contain('not found');
  });
});
