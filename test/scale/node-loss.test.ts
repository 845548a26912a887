// kill -9 of a node's media-app with a call in every kind of resource: within 5 s nothing of it is
// left in a non-final state (each table queried), the conference room it hosted is hosted again by
// the next call that joins it on the other node.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { conferencesRepo } from '../../core/repos/conferences';
import { queuesRepo } from '../../core/repos/queues';
import { flowsRepo } from '../../core/repos/flows';
import { trunksRepo } from '../../core/repos/trunks';
import { parseActions } from '../../core/flow';
import { newId, EMPTY_UUID } from '../../core/ids';
import { createFixture } from '../../testkit/api';
import { truncateAll } from '../../testkit/db';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { answeringUas, killAllSipp, RtpSink, sipp, uacWaitsForBye, until, sleep } from '../../testkit/media-app/harness';
import { Cluster } from '../../testkit/scale/cluster';
import { numberWithFlow } from '../../testkit/scale/fixtures';

describe('scale: a node killed with -9', function () {
  this.timeout(180_000);
  let c: Cluster;
  const sinks: RtpSink[] = [];

  before(async () => {
    await truncateAll();
    c = await Cluster.start();
  });
  after(async () => {
    killAllSipp();
    sinks.forEach((s) => s.close());
    await c?.close();
  });

  it('calls, activeflows, conferences, queuecalls, groupcalls, transfers, speakings, transcribes and AI calls of the node are final within 5 s', async () => {
    const f = await createFixture(c.apis[0]!.ctx);
    const cid = f.customer.id;
    // a groupcall from the API rings a party that never answers; whichever node took it is the one killed
    const gPort = await freePort();
    sipp(answeringUas({ pauseMs: 60_000 }), ['-i', '127.0.0.1', '-p', String(gPort), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 90_000 });
    const g = await request(c.apis[0]!.app)
      .post('/v1.0/groupcalls')
      .set('Authorization', `Bearer ${f.token}`)
      .send({
        source: { type: 'sip', target: 'a@example.test' },
        destinations: [{ type: 'sip', target: `g@127.0.0.1:${gPort}` }],
        actions: [{ type: 'answer' }],
        ring_method: 'ring_all',
        answer_method: 'hangup_others',
      });
    expect(g.status, JSON.stringify(g.body)).to.equal(200);
    const gNode = await until(
      async () => (await c.db('groupcalls').where({ customer_id: cid, status: 'progressing' }).whereNot({ node_id: '' }).first())?.node_id as string | undefined,
      15_000,
      'groupcall taken by a node',
    );
    const n0 = c.nodes.find((n) => n.id === gNode)!;
    const n1 = c.nodes.find((n) => n.id !== gNode)!;
    // (a leg the API created gets its node_id when the node takes it; its node is also in Redis, call-node:<id>)
    await until(async () => (await c.db('calls').where({ customer_id: cid, direction: 'outgoing', status: 'ringing' })).length === 1, 10_000, 'groupcall leg ringing');
    await trunksRepo(c.db).create(cid, `nl${randomBytes(4).toString('hex')}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const room = await conferencesRepo(c.db).create({ customer_id: cid, type: 'conference', status: 'progressing' } as never);
    const hold = await flowsRepo(c.db).create({ customer_id: cid, actions: parseActions([{ type: 'sleep', option: { duration: 60_000 } }] as never) } as never);
    const queue = await queuesRepo(c.db).create(cid, { name: 'nl', tag_ids: [newId()], wait_flow_id: hold.id, wait_timeout: 120_000 });
    // a party that rings and never answers: the connect's leg stays dialing
    const ringPort = await freePort();
    sipp(answeringUas({ pauseMs: 60_000 }), ['-i', '127.0.0.1', '-p', String(ringPort), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 90_000 });

    const long = { type: 'sleep', option: { duration: 60_000 } };
    const flows = [
      [{ type: 'answer' }, { type: 'conference_join', option: { conference_id: room.id } }, long],
      [{ type: 'answer' }, { type: 'queue_join', option: { queue_id: queue.id } }, long],
      [{ type: 'answer' }, { type: 'recording_start', option: {} }, { type: 'transcribe_start', option: { language: 'en-US' } }, long],
      [{ type: 'answer' }, { type: 'connect', option: { destinations: [{ type: 'sip', target: `ring@127.0.0.1:${ringPort}` }] } }, long],
    ];
    const numbers: string[] = [];
    for (const actions of flows) numbers.push((await numberWithFlow(c.db, '', actions, cid)).number);
    // every caller straight to that node (not through the edge): all of it lives there
    for (const n of numbers) {
      const sink = await RtpSink.open();
      sinks.push(sink);
      sipp(uacWaitsForBye(`${n}@127.0.0.1:${n0.sipPort}`, 'pbx', sink.port, { byeTimeoutMs: 90_000 }), [`127.0.0.1:${n0.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 100_000 });
    }
    const live = await until(
      async () => {
        const rs = await c.db('calls').where({ customer_id: cid, node_id: n0.id, direction: 'incoming', status: 'progressing' }).select('id', 'destination');
        return rs.length === 4 ? rs : null;
      },
      20_000,
      '4 calls up on node 0',
    );
    const byNumber = (n: string) => live.find((r) => r.destination.target === n)!.id as string;
    const [confCall, queueCall, speechCall] = numbers.map(byNumber);
    await until(async () => (await c.db('conferencecalls').where({ conference_id: room.id, status: 'joined' })).length === 1, 10_000, 'conference participant joined');
    await until(async () => (await c.db('queuecalls').where({ reference_id: queueCall, status: 'waiting' })).length === 1, 10_000, 'queuecall waiting');
    await until(async () => (await c.db('transcribes').where({ reference_id: speechCall, status: 'progressing' })).length === 1, 10_000, 'transcribe progressing');
    // (the groupcall's leg rings on node 0 too: the connect's is the one to the `ring` party)
    await until(
      async () => (await c.db('calls').where({ customer_id: cid, node_id: n0.id, direction: 'outgoing', status: 'ringing' })).some((r) => r.destination.target === `ring@127.0.0.1:${ringPort}`),
      10_000,
      'connect leg ringing',
    );
    const speaking = await request(c.apis[1]!.app).post('/v1.0/speakings').set('Authorization', `Bearer ${f.token}`).send({ reference_type: 'call', reference_id: speechCall });
    expect(speaking.status, JSON.stringify(speaking.body)).to.be.oneOf([200, 201]);
    await until(async () => (await c.db('speakings').where({ id: speaking.body.id, status: 'active' })).length === 1, 10_000, 'speaking active');
    // An AI call and a transfer in progress on a call of the node: rows as media-app writes them
    // (a real ai_talk needs an LLM and a REFER a third phone; their finalisation is what is tested here)
    const now = new Date();
    const aicallId = newId();
    await c
      .db('aicalls')
      .insert({ id: aicallId, customer_id: cid, assistance_type: 'ai', assistance_id: newId(), reference_type: 'call', reference_id: confCall, status: 'progressing', tm_create: now } as never);
    const transferId = newId();
    await c.db('transfers').insert({
      id: transferId,
      customer_id: cid,
      type: 'attended',
      transferer_call_id: queueCall,
      transferee_addresses: JSON.stringify([]),
      transferee_call_id: EMPTY_UUID,
      groupcall_id: EMPTY_UUID,
      confbridge_id: EMPTY_UUID,
      status: 'consulting',
      tm_create: now,
    } as never);

    const killedAt = Date.now();
    n0.signal('SIGKILL');
    await n0.exited;

    const leftovers = async () => {
      const callIds = (await c.db('calls').where({ customer_id: cid }).pluck('id')) as string[];
      const q = {
        calls: await c.db('calls').where({ customer_id: cid }).whereNot({ status: 'hangup' }).count({ n: 'id' }),
        activeflows: await c.db('activeflows').whereIn('reference_id', callIds).where({ status: 'running' }).count({ n: 'id' }),
        conferencecalls: await c.db('conferencecalls').where({ conference_id: room.id }).whereNot({ status: 'leaved' }).count({ n: 'id' }),
        conferences: await c.db('conferences').where({ node_id: n0.id, customer_id: cid }).whereNot({ type: 'conference' }).whereNot({ status: 'terminated' }).count({ n: 'id' }),
        queuecalls: await c.db('queuecalls').where({ customer_id: cid }).whereNotIn('status', ['done', 'abandoned']).count({ n: 'id' }),
        groupcalls: await c.db('groupcalls').where({ customer_id: cid }).whereNot({ status: 'hangup' }).count({ n: 'id' }),
        transfers: await c.db('transfers').where({ customer_id: cid }).whereIn('status', ['initiating', 'consulting']).count({ n: 'id' }),
        speakings: await c.db('speakings').where({ customer_id: cid }).whereNot({ status: 'stopped' }).count({ n: 'id' }),
        transcribes: await c.db('transcribes').where({ customer_id: cid, status: 'progressing' }).count({ n: 'id' }),
        aicalls: await c.db('aicalls').where({ customer_id: cid }).whereNot({ status: 'terminated' }).count({ n: 'id' }),
        recordings: await c.db('recordings').where({ customer_id: cid }).whereIn('status', ['initiating', 'recording', 'stopping']).count({ n: 'id' }),
        roomHost: (await c.redis.get(`${c.prefix}conference-node:${room.id}`)) ? [{ n: 1 }] : [{ n: 0 }],
      };
      return Object.fromEntries(Object.entries(q).map(([k, v]) => [k, Number(v[0]!.n)]));
    };
    let last: Record<string, number> = {};
    await until(
      async () => {
        last = await leftovers();
        return Object.values(last).every((n) => n === 0);
      },
      15_000,
      'nothing left',
    ).catch(() => undefined);
    const finalMs = Date.now() - killedAt;
    expect(last, 'left in a non-final state').to.deep.equal(Object.fromEntries(Object.keys(last).map((k) => [k, 0])));
    expect(finalMs, 'finalised within 5 s of the kill').to.be.at.most(5000);
    // the sweeper reports after the records, once it has also failed the dead node's queued commands
    // (a BullMQ worker that takes seconds to start on a loaded machine), which it waits on for up to 15 s
    // (core/calls/node-sweep.ts failQueued): wait for the report itself, past that wait
    const swept = await until(async () => c.reports.find((r) => r.nodeId === n0.id) ?? null, 25_000, 'the sweep report of the killed node');
    expect(swept.resources!.conferencesReleased).to.deep.equal([room.id]);
    expect(swept.resources!.groupcalls).to.have.length(1);
    expect((await c.db('conferences').where({ id: room.id }).first())!.status).to.equal('progressing');

    // the room is hosted again by the next call to join it, on the surviving node
    const sink = await RtpSink.open();
    sinks.push(sink);
    sipp(uacWaitsForBye(`${numbers[0]}@127.0.0.1:${n1.sipPort}`, 'pbx', sink.port, { byeTimeoutMs: 90_000 }), [`127.0.0.1:${n1.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 100_000 });
    await until(async () => (await c.db('conferencecalls').where({ conference_id: room.id, status: 'joined' })).length === 1, 15_000, 'joined on the other node');
    expect((await c.db('conferences').where({ id: room.id }).first())!.node_id).to.equal(n1.id);
    expect(await c.redis.get(`${c.prefix}conference-node:${room.id}`)).to.equal(n1.id);
    await sleep(100);
  });
});
