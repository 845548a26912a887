// The call state table (media-app/call/state.ts) on real Postgres and a real Redis event stream:
// allowed moves write the row once and publish once; refused moves write nothing and publish nothing;
// a row moved behind the owner's back is not overwritten; moves asked together land in order.
import { expect } from 'chai';
import { randomBytes, randomUUID as randomUuid } from 'node:crypto';
import pino from 'pino';
import { Redis } from 'ioredis';
import { EventPublisher } from '../../core/events/bus';
import { repos } from '../../core/repos';
import { callsRepo, type CallRow } from '../../core/repos/calls';
import type { CallStatus } from '../../core/calls/model';
import { CallState, type CallMove } from '../../media-app/call/state';
import { testDb } from '../../testkit/db';

describe('call state table (CallState)', function () {
  this.timeout(30_000);
  let redis: Redis;
  let events: EventPublisher;
  const stream = `cs-events-${process.pid}-${randomBytes(4).toString('hex')}`;
  const logger = pino({ level: 'silent' });

  before(() => {
    redis = new Redis(process.env.TEST_REDIS_URL!);
    events = new EventPublisher(redis, stream);
  });
  after(async () => {
    await redis.del(stream);
    redis.disconnect();
  });

  async function published(callId: string): Promise<string[]> {
    const entries = (await redis.xrange(stream, '-', '+')) as [string, string[]][];
    return entries
      .map(([, f]) => JSON.parse(f[f.indexOf('e') + 1]!) as { event_type: string; resource_id: string })
      .filter((e) => e.resource_id === callId)
      .map((e) => e.event_type);
  }

  async function newCall(direction: 'incoming' | 'outgoing' = 'incoming'): Promise<{ state: CallState; row: CallRow }> {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `cs${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'cs' })).id;
    const row = await callsRepo(db).create({ customer_id: cid, source: { type: 'tel', target: '+15550001' }, destination: { type: 'tel', target: '+15550002' }, direction, status: 'dialing' });
    return { state: new CallState(row, { db, events, logger }), row };
  }

  /** Puts a fresh call in `status` through allowed moves. */
  async function callIn(path: CallMove[]): Promise<CallState> {
    const { state } = await newCall();
    for (const s of path) expect(await state.move(s), `move to ${s}`).to.equal(true);
    return state;
  }

  it('allowed moves write the row and publish once each, in order', async () => {
    const { state, row } = await newCall();
    const seen: [CallStatus, CallStatus][] = [];
    state.on('stateChange', (to, from) => seen.push([to, from]));
    for (const s of ['ringing', 'progressing', 'terminating'] as const) expect(await state.move(s)).to.equal(true);
    expect(await state.move('hangup', 'normal_clearing')).to.equal(true);
    const db = await testDb();
    const stored = (await callsRepo(db).get(row.id))!;
    expect(stored).to.include({ status: 'hangup', hangup_by: 'local', hangup_reason: 'normal' });
    expect(state.row.status).to.equal('hangup');
    expect(await published(row.id)).to.deep.equal(['call_ringing', 'call_progressing', 'call_terminating', 'call_hangup']);
    expect(seen).to.deep.equal([
      ['ringing', 'dialing'],
      ['progressing', 'ringing'],
      ['terminating', 'progressing'],
      ['hangup', 'terminating'],
    ]);
  });

  const refused: [CallMove[], CallMove][] = [
    [['ringing'], 'ringing'],
    [['progressing'], 'ringing'],
    [['progressing'], 'canceling'],
    [['ringing', 'progressing', 'terminating'], 'progressing'],
    [['canceling'], 'progressing'],
    [['canceling'], 'terminating'],
    [['hangup'], 'ringing'],
    [['hangup'], 'hangup'],
  ];
  for (const [path, to] of refused) {
    it(`refuses ${path[path.length - 1]} → ${to}: no write, no publish`, async () => {
      const state = await callIn(path);
      const db = await testDb();
      const before = (await callsRepo(db).get(state.row.id))!;
      const events = await published(before.id);
      let moved = false;
      state.on('stateChange', () => (moved = true));
      expect(state.allows(to)).to.equal(false);
      expect(await state.move(to)).to.equal(false);
      const after = (await callsRepo(db).get(before.id))!;
      expect(after.status).to.equal(before.status);
      expect(after.tm_update?.getTime()).to.equal(before.tm_update?.getTime());
      expect(await published(before.id)).to.deep.equal(events);
      expect(moved).to.equal(false);
    });
  }

  it('a row moved behind the owner is not overwritten: the move is refused by the guarded write and the row re-read', async () => {
    const { state, row } = await newCall('outgoing');
    const db = await testDb();
    // another writer (a sweeper, a second owner) moved the row on
    await db('calls').where({ id: row.id }).update({ status: 'canceling' });
    expect(state.allows('ringing')).to.equal(true);
    expect(await state.move('ringing')).to.equal(false);
    expect(state.state).to.equal('canceling');
    expect((await callsRepo(db).get(row.id))!.status).to.equal('canceling');
    expect(await published(row.id)).to.deep.equal([]);
  });

  it('moves asked together run one at a time: 180 and 200 at once land as ringing then progressing', async () => {
    const { state, row } = await newCall('outgoing');
    const r = await Promise.all([state.move('ringing'), state.move('progressing'), state.move('ringing')]);
    expect(r).to.deep.equal([true, true, false]);
    expect(await published(row.id)).to.deep.equal(['call_ringing', 'call_progressing']);
    expect((await callsRepo(await testDb()).get(row.id))!.status).to.equal('progressing');
  });

  // The flow a call runs is set before the flow starts (runFlow); a flow whose first action answers the
  // call must be named by the answer's row and event, and a write already in flight must not undo it.
  it("the call's flow set before a move is written with it, published with it, and kept", async () => {
    const { state, row } = await newCall();
    const db = await testDb();
    const flow = { activeflow_id: randomUuid(), flow_id: randomUuid() };
    const ringing = state.move('ringing'); // in flight while the flow is set
    state.setFlow(flow);
    expect(await ringing).to.equal(true);
    expect(state.row).to.include(flow);
    expect(await state.move('progressing')).to.equal(true);
    const stored = (await callsRepo(db).get(row.id))!;
    expect(stored).to.include({ status: 'progressing', ...flow });
    const entries = (await redis.xrange(stream, '-', '+')) as [string, string[]][];
    const answered = entries
      .map(([, f]) => JSON.parse(f[f.indexOf('e') + 1]!) as { event_type: string; resource_id: string; data: CallRow })
      .find((e) => e.resource_id === row.id && e.event_type === 'call_progressing');
    expect(answered?.data).to.include(flow);
  });

  it("a hang-up before the flow's own write lands carries the flow too", async () => {
    const { state, row } = await newCall();
    const flow = { activeflow_id: randomUuid(), flow_id: randomUuid() };
    state.setFlow(flow);
    expect(await state.move('hangup', 'normal_clearing')).to.equal(true);
    expect((await callsRepo(await testDb()).get(row.id))!).to.include({ status: 'hangup', ...flow });
  });
});
