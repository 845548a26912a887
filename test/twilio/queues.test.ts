// Issue 36: Queues and Members driven by the official `twilio` client against the platform (control-api
// on loopback, sip-server and a media-app node in process, real Postgres and Redis). A sipp caller
// waits in one of our queues (no agent); the Member update with a Url dequeues it to the TwiML a real
// HTTP server (testkit/twiml/server.ts) serves, which speaks to the caller and hangs up.
import { useTwilioRestStack, type TwilioRestStack } from '../../testkit/twiml/stack';
import { expect } from 'chai';
import request from 'supertest';
import twilio from 'twilio';
import { createFixture } from '../../testkit/api';
import { testDb } from '../../testkit/db';
import { sleep, until } from '../../testkit/media-app/harness';
import { placeCall, type PlacedCall } from '../../testkit/streams/support';
import { twilioClient, restRefusal } from '../../testkit/twilio';
import { queuesRepo } from '../../core/repos/queues';
import { callSid, fromSid, toSid } from '../../core/twilio/sids';

describe('twilio: Queues and Members', function () {
  this.timeout(120_000);
  let s: TwilioRestStack;

  useTwilioRestStack((x) => (s = x));

  async function wait(queueSid: string): Promise<PlacedCall> {
    const c = await placeCall(s.stack, s.f.customer.id, [{ type: 'answer' }, { type: 'queue_join', option: { queue_id: fromSid('QU', queueSid) } }, { type: 'hangup' }], { talk: false });
    s.placed.push(c);
    return c;
  }

  it('create, list, fetch, rename; a waiting sipp caller is a member, dequeued to a TwiML Url that speaks', async () => {
    const q = await s.client.queues.create({ friendlyName: 'support line' });
    expect(q.sid).to.match(/^QU[0-9a-f]{32}$/);
    expect(q).to.include({ accountSid: s.sid, friendlyName: 'support line', currentSize: 0, averageWaitTime: 0 });
    expect(q.uri).to.equal(`/2010-04-01/Accounts/${s.sid}/Queues/${q.sid}.json`);
    const row = await queuesRepo(s.stack.api.ctx.db).get(s.f.customer.id, fromSid('QU', q.sid)!);
    expect(row?.name).to.equal('support line');
    expect((await s.client.queues.list()).map((x) => x.sid)).to.include(q.sid);
    expect((await s.client.queues(q.sid).update({ friendlyName: 'support' })).friendlyName).to.equal('support');
    expect((await s.client.queues(q.sid).fetch()).friendlyName).to.equal('support');

    const first = await wait(q.sid);
    const second = await wait(q.sid);
    await until(async () => (await s.client.queues(q.sid).fetch()).currentSize === 2 || null, 15_000, 'two waiting');
    await sleep(1100);
    const now = await s.client.queues(q.sid).fetch();
    expect(now.averageWaitTime).to.be.greaterThan(0);
    const members = await s.client.queues(q.sid).members.list();
    expect(members.map((m) => [m.callSid, m.position])).to.deep.equal([
      [callSid(first.callId), 1],
      [callSid(second.callId), 2],
    ]);
    expect(members[0]!.queueSid).to.equal(q.sid);
    expect(members[0]!.dateEnqueued).to.be.instanceOf(Date);
    expect(members[0]!.waitTime).to.be.greaterThan(0);
    expect((await s.client.queues(q.sid).members('Front').fetch()).callSid).to.equal(callSid(first.callId));
    expect((await s.client.queues(q.sid).members(callSid(second.callId)).fetch()).position).to.equal(2);

    // dequeue the front caller to a TwiML app that speaks, then hangs up
    const say = new twilio.twiml.VoiceResponse();
    say.say('You have left the queue, goodbye');
    say.hangup();
    s.app.on('/dequeued', say.toString());
    const out = await s.client
      .queues(q.sid)
      .members('Front')
      .update({ url: s.app.url('/dequeued'), method: 'POST' });
    expect(out.callSid).to.equal(callSid(first.callId));
    const req = await s.app.next('/dequeued');
    expect(req.signed, 'signed').to.equal(true);
    expect(req.params).to.include({ CallSid: callSid(first.callId), AccountSid: s.sid });
    // from here the queue's ringback is over (the redirect ended the wait before the fetch): what is heard is the Say
    const voicedBefore = first.peer.levels.length;
    const r = await first.sipp;
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(first.peer.voiced(voicedBefore), 'the caller heard the Say').to.be.greaterThan(25);
    const db = await testDb();
    const qc = await until(async () => (await db('queuecalls').where({ reference_id: first.callId }).whereIn('status', ['abandoned', 'done']).first()) ?? null, 10_000, 'left the queue');
    expect(qc.status).to.equal('abandoned');
    const call = await until(async () => (await db('calls').where({ id: first.callId }).first()) ?? null, 1000, 'call');
    const af = await until(async () => (await db('activeflows').where({ id: call.activeflow_id, status: 'ended' }).first()) ?? null, 10_000, 'flow ended');
    expect(af.error).to.equal('');

    // the other one is now the front; the queue counts one
    const left = await s.client.queues(q.sid).members.list();
    expect(left.map((m) => [m.callSid, m.position])).to.deep.equal([[callSid(second.callId), 1]]);
    expect((await s.client.queues(q.sid).fetch()).currentSize).to.equal(1);
    const gone = await restRefusal(s.client.queues(q.sid).members(callSid(first.callId)).fetch());
    expect([gone.status, gone.code]).to.deep.equal([404, 20404]);
    await s.client
      .queues(q.sid)
      .members(callSid(second.callId))
      .update({ url: s.app.url('/dequeued') });
    const r2 = await second.sipp;
    expect(r2.code, r2.errors + r2.messages).to.equal(0);
    expect(await s.client.queues(q.sid).members.list()).to.deep.equal([]);
    const empty = await restRefusal(s.client.queues(q.sid).members('Front').fetch());
    expect([empty.status, empty.code]).to.deep.equal([404, 20404]);

    expect(await s.client.queues(q.sid).remove()).to.equal(true);
    const deleted = await restRefusal(s.client.queues(q.sid).fetch());
    expect([deleted.status, deleted.code]).to.deep.equal([404, 20404]);
  });

  it('MaxSize: stored and returned (default 1000, 1–5000); a full queue refuses <Enqueue>: QueueResult=queue-full', async () => {
    expect((await s.client.queues.create({ friendlyName: 'default size' })).maxSize).to.equal(1000);
    const q = await s.client.queues.create({ friendlyName: 'one at a time', maxSize: 1 });
    expect(q.maxSize).to.equal(1);
    expect((await s.client.queues(q.sid).update({ maxSize: 2 })).maxSize).to.equal(2);
    expect((await s.client.queues(q.sid).fetch()).maxSize).to.equal(2);
    const renamed = await s.client.queues(q.sid).update({ friendlyName: 'one at a time', maxSize: 1 });
    expect([renamed.friendlyName, renamed.maxSize]).to.deep.equal(['one at a time', 1]);
    const enqueue = new twilio.twiml.VoiceResponse();
    enqueue.enqueue({ action: '/enq-done' }, 'one at a time');
    s.app.on('/enq', enqueue.toString());
    const done = new twilio.twiml.VoiceResponse();
    done.hangup();
    s.app.on('/enq-done', done.toString());
    const flow = [{ type: 'answer' }, { type: 'twiml', option: { url: s.app.url('/enq') } }];
    const first = await placeCall(s.stack, s.f.customer.id, flow, { talk: false });
    s.placed.push(first);
    await until(async () => (await s.client.queues(q.sid).fetch()).currentSize === 1 || null, 15_000, 'the first caller waits');
    const second = await placeCall(s.stack, s.f.customer.id, flow, { talk: false, live: false });
    s.placed.push(second);
    const full = await s.app.next('/enq-done', 20_000);
    expect(full.params).to.include({ QueueResult: 'queue-full', QueueSid: q.sid, CallSid: callSid(second.callId) });
    expect(full.signed).to.equal(true);
    const r = await second.sipp;
    expect(r.code, r.errors).to.equal(0);
    // the first is still the only member
    expect((await s.client.queues(q.sid).members.list()).map((m) => m.callSid)).to.deep.equal([callSid(first.callId)]);
    await s.client.calls(callSid(first.callId)).update({ status: 'completed' });
    expect((await first.sipp).code).to.equal(0);
  });

  it('bad input: unknown or foreign sids 20404, bad parameters 20001, wrong token 20003', async () => {
    const other = await createFixture(s.stack.api.ctx);
    const foreign = await queuesRepo(s.stack.api.ctx.db).create(other.customer.id, { name: 'theirs' });
    const theirs = toSid('QU', foreign.id);
    for (const bad of [theirs, 'QU' + '0'.repeat(32), 'QUxyz', toSid('CF', foreign.id)]) {
      const e = await restRefusal(s.client.queues(bad).fetch());
      expect([e.status, e.code], bad).to.deep.equal([404, 20404]);
    }
    expect((await s.client.queues.list()).map((x) => x.sid)).to.not.include(theirs);
    const e1 = await restRefusal(s.client.queues(theirs).update({ friendlyName: 'mine now' }));
    expect([e1.status, e1.code]).to.deep.equal([404, 20404]);
    expect((await queuesRepo(s.stack.api.ctx.db).get(null, foreign.id))!.name).to.equal('theirs');
    const e2 = await restRefusal(s.client.queues(theirs).members.list());
    expect(e2.code).to.equal(20404);

    const base = `/2010-04-01/Accounts/${s.sid}/Queues`;
    const auth = (r: request.Test) => r.auth(s.sid, s.token);
    const before = (await s.client.queues.list()).length;
    for (const body of [
      {},
      { FriendlyName: '' },
      { FriendlyName: 'x'.repeat(65) },
      { FriendlyName: 'sized', MaxSize: '0' },
      { FriendlyName: 'sized', MaxSize: '5001' },
      { FriendlyName: 'sized', MaxSize: 'ten' },
      { FriendlyName: ['a', 'b'] },
    ]) {
      const res = await auth(request(s.stack.api.app).post(`${base}.json`).type('form').send(body));
      expect([res.status, res.body.code], JSON.stringify(body)).to.deep.equal([400, 20001]);
    }
    expect((await s.client.queues.list()).length).to.equal(before);

    const q = await s.client.queues.create({ friendlyName: 'bad inputs' });
    const c = await wait(q.sid);
    await until(async () => (await s.client.queues(q.sid).fetch()).currentSize === 1 || null, 15_000, 'waiting');
    const mPath = `${base}/${q.sid}/Members/${callSid(c.callId)}.json`;
    for (const [body, code] of [
      [{}, 21205],
      [{ Url: 'not a url' }, 21205],
      [{ Url: 'ftp://127.0.0.1/x' }, 21205],
      [{ Url: s.app.url('/x'), Method: 'PUT' }, 20001],
      [{ Twiml: '<Response/>' }, 20001],
    ] as const) {
      const res = await auth(request(s.stack.api.app).post(mPath).type('form').send(body));
      expect([res.status, res.body.code], JSON.stringify(body)).to.deep.equal([400, code]);
    }
    const notMember = await auth(
      request(s.stack.api.app)
        .post(`${base}/${q.sid}/Members/${callSid(foreign.id)}.json`)
        .type('form')
        .send({ Url: s.app.url('/x') }),
    );
    expect([notMember.status, notMember.body.code]).to.deep.equal([404, 20404]);
    // nothing was dequeued
    await sleep(300);
    expect((await s.client.queues(q.sid).members.list()).map((m) => m.callSid)).to.deep.equal([callSid(c.callId)]);

    const wrong = twilioClient(s.api.baseUrl, s.sid, '0'.repeat(32));
    const e3 = await restRefusal(wrong.queues.list());
    expect([e3.status, e3.code]).to.deep.equal([401, 20003]);

    const bye = new twilio.twiml.VoiceResponse();
    bye.hangup();
    s.app.on('/bye', bye.toString());
    await s.client
      .queues(q.sid)
      .members('Front')
      .update({ url: s.app.url('/bye') });
    const r = await c.sipp;
    expect(r.code, r.errors + r.messages).to.equal(0);
  });
});
