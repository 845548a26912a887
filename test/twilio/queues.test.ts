// Issue 36: Queues and Members driven by the official `twilio` client against the platform (control-api
// on loopback, sip-server and a media-app node in process, real Postgres and Redis). A sipp caller
// waits in one of our queues (no agent); the Member update with a Url dequeues it to the TwiML a real
// HTTP server (testkit/twiml/server.ts) serves, which speaks to the caller and hangs up.
import { expect } from 'chai';
import request from 'supertest';
import twilio, { RestException } from 'twilio';
import { createFixture, type Fixture } from '../../testkit/api';
import { testDb } from '../../testkit/db';
import { killAllSipp, sleep, until } from '../../testkit/media-app/harness';
import { customerWithTrunk, placeCall, startStack, type PlacedCall, type Stack } from '../../testkit/streams/support';
import { serveApp, twilioClient, type ServedApp, type TwilioClient } from '../../testkit/twilio';
import { TwimlServer } from '../../testkit/twiml/server';
import { queuesRepo } from '../../core/repos/queues';
import { accountSid, callSid, fromSid, toSid } from '../../core/twilio/sids';
import { twilioAuthToken } from '../../core/twilio/auth-token';

async function refusal(p: Promise<unknown>): Promise<RestException> {
  try {
    await p;
  } catch (e) {
    if (e instanceof RestException) return e;
    throw e;
  }
  throw new Error('expected a RestException');
}

describe('twilio: Queues and Members', function () {
  this.timeout(120_000);
  let stack: Stack;
  let api: ServedApp;
  let f: Fixture;
  let sid: string;
  let token: string;
  let client: TwilioClient;
  let web: TwimlServer;
  const placed: PlacedCall[] = [];

  before(async () => {
    stack = await startStack();
    api = await serveApp(stack.api.app);
    f = await customerWithTrunk(stack.api);
    sid = accountSid(f.customer.id);
    token = twilioAuthToken(stack.api.ctx.config.jwtSecret, f.customer.id, 0);
    client = twilioClient(api.baseUrl, sid, token);
    // media-app signs with its own platform secret (one shared secret in production; two processes' configs here)
    web = await TwimlServer.start(twilioAuthToken(stack.platform.config.jwtSecret, f.customer.id, 0));
  });
  after(async () => {
    killAllSipp();
    for (const c of placed) c.peer.close();
    await web?.close();
    await api?.close();
    await stack?.close();
  });

  async function wait(queueSid: string): Promise<PlacedCall> {
    const c = await placeCall(stack, f.customer.id, [{ type: 'answer' }, { type: 'queue_join', option: { queue_id: fromSid('QU', queueSid) } }, { type: 'hangup' }], { talk: false });
    placed.push(c);
    return c;
  }

  it('create, list, fetch, rename; a waiting sipp caller is a member, dequeued to a TwiML Url that speaks', async () => {
    const q = await client.queues.create({ friendlyName: 'support line' });
    expect(q.sid).to.match(/^QU[0-9a-f]{32}$/);
    expect(q).to.include({ accountSid: sid, friendlyName: 'support line', currentSize: 0, averageWaitTime: 0 });
    expect(q.uri).to.equal(`/2010-04-01/Accounts/${sid}/Queues/${q.sid}.json`);
    const row = await queuesRepo(stack.api.ctx.db).get(f.customer.id, fromSid('QU', q.sid)!);
    expect(row?.name).to.equal('support line');
    expect((await client.queues.list()).map((x) => x.sid)).to.include(q.sid);
    expect((await client.queues(q.sid).update({ friendlyName: 'support' })).friendlyName).to.equal('support');
    expect((await client.queues(q.sid).fetch()).friendlyName).to.equal('support');

    const first = await wait(q.sid);
    const second = await wait(q.sid);
    await until(async () => (await client.queues(q.sid).fetch()).currentSize === 2 || null, 15_000, 'two waiting');
    await sleep(1100);
    const now = await client.queues(q.sid).fetch();
    expect(now.averageWaitTime).to.be.greaterThan(0);
    const members = await client.queues(q.sid).members.list();
    expect(members.map((m) => [m.callSid, m.position])).to.deep.equal([
      [callSid(first.callId), 1],
      [callSid(second.callId), 2],
    ]);
    expect(members[0]!.queueSid).to.equal(q.sid);
    expect(members[0]!.dateEnqueued).to.be.instanceOf(Date);
    expect(members[0]!.waitTime).to.be.greaterThan(0);
    expect((await client.queues(q.sid).members('Front').fetch()).callSid).to.equal(callSid(first.callId));
    expect((await client.queues(q.sid).members(callSid(second.callId)).fetch()).position).to.equal(2);

    // dequeue the front caller to a TwiML app that speaks, then hangs up
    const say = new twilio.twiml.VoiceResponse();
    say.say('You have left the queue, goodbye');
    say.hangup();
    web.on('/dequeued', say.toString());
    const out = await client
      .queues(q.sid)
      .members('Front')
      .update({ url: web.url('/dequeued'), method: 'POST' });
    expect(out.callSid).to.equal(callSid(first.callId));
    const req = await web.next('/dequeued');
    expect(req.signed, 'signed').to.equal(true);
    expect(req.params).to.include({ CallSid: callSid(first.callId), AccountSid: sid });
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
    const left = await client.queues(q.sid).members.list();
    expect(left.map((m) => [m.callSid, m.position])).to.deep.equal([[callSid(second.callId), 1]]);
    expect((await client.queues(q.sid).fetch()).currentSize).to.equal(1);
    const gone = await refusal(client.queues(q.sid).members(callSid(first.callId)).fetch());
    expect([gone.status, gone.code]).to.deep.equal([404, 20404]);
    await client
      .queues(q.sid)
      .members(callSid(second.callId))
      .update({ url: web.url('/dequeued') });
    const r2 = await second.sipp;
    expect(r2.code, r2.errors + r2.messages).to.equal(0);
    expect(await client.queues(q.sid).members.list()).to.deep.equal([]);
    const empty = await refusal(client.queues(q.sid).members('Front').fetch());
    expect([empty.status, empty.code]).to.deep.equal([404, 20404]);

    expect(await client.queues(q.sid).remove()).to.equal(true);
    const deleted = await refusal(client.queues(q.sid).fetch());
    expect([deleted.status, deleted.code]).to.deep.equal([404, 20404]);
  });

  it('MaxSize: stored and returned (default 1000, 1–5000); a full queue refuses <Enqueue>: QueueResult=queue-full', async () => {
    expect((await client.queues.create({ friendlyName: 'default size' })).maxSize).to.equal(1000);
    const q = await client.queues.create({ friendlyName: 'one at a time', maxSize: 1 });
    expect(q.maxSize).to.equal(1);
    expect((await client.queues(q.sid).update({ maxSize: 2 })).maxSize).to.equal(2);
    expect((await client.queues(q.sid).fetch()).maxSize).to.equal(2);
    const renamed = await client.queues(q.sid).update({ friendlyName: 'one at a time', maxSize: 1 });
    expect([renamed.friendlyName, renamed.maxSize]).to.deep.equal(['one at a time', 1]);
    const enqueue = new twilio.twiml.VoiceResponse();
    enqueue.enqueue({ action: '/enq-done' }, 'one at a time');
    web.on('/enq', enqueue.toString());
    const done = new twilio.twiml.VoiceResponse();
    done.hangup();
    web.on('/enq-done', done.toString());
    const flow = [{ type: 'answer' }, { type: 'twiml', option: { url: web.url('/enq') } }];
    const first = await placeCall(stack, f.customer.id, flow, { talk: false });
    placed.push(first);
    await until(async () => (await client.queues(q.sid).fetch()).currentSize === 1 || null, 15_000, 'the first caller waits');
    const second = await placeCall(stack, f.customer.id, flow, { talk: false, live: false });
    placed.push(second);
    const full = await web.next('/enq-done', 20_000);
    expect(full.params).to.include({ QueueResult: 'queue-full', QueueSid: q.sid, CallSid: callSid(second.callId) });
    expect(full.signed).to.equal(true);
    const r = await second.sipp;
    expect(r.code, r.errors).to.equal(0);
    // the first is still the only member
    expect((await client.queues(q.sid).members.list()).map((m) => m.callSid)).to.deep.equal([callSid(first.callId)]);
    await client.calls(callSid(first.callId)).update({ status: 'completed' });
    expect((await first.sipp).code).to.equal(0);
  });

  it('bad input: unknown or foreign sids 20404, bad parameters 20001, wrong token 20003', async () => {
    const other = await createFixture(stack.api.ctx);
    const foreign = await queuesRepo(stack.api.ctx.db).create(other.customer.id, { name: 'theirs' });
    const theirs = toSid('QU', foreign.id);
    for (const bad of [theirs, 'QU' + '0'.repeat(32), 'QUxyz', toSid('CF', foreign.id)]) {
      const e = await refusal(client.queues(bad).fetch());
      expect([e.status, e.code], bad).to.deep.equal([404, 20404]);
    }
    expect((await client.queues.list()).map((x) => x.sid)).to.not.include(theirs);
    const e1 = await refusal(client.queues(theirs).update({ friendlyName: 'mine now' }));
    expect([e1.status, e1.code]).to.deep.equal([404, 20404]);
    expect((await queuesRepo(stack.api.ctx.db).get(null, foreign.id))!.name).to.equal('theirs');
    const e2 = await refusal(client.queues(theirs).members.list());
    expect(e2.code).to.equal(20404);

    const base = `/2010-04-01/Accounts/${sid}/Queues`;
    const auth = (r: request.Test) => r.auth(sid, token);
    const before = (await client.queues.list()).length;
    for (const body of [
      {},
      { FriendlyName: '' },
      { FriendlyName: 'x'.repeat(65) },
      { FriendlyName: 'sized', MaxSize: '0' },
      { FriendlyName: 'sized', MaxSize: '5001' },
      { FriendlyName: 'sized', MaxSize: 'ten' },
      { FriendlyName: ['a', 'b'] },
    ]) {
      const res = await auth(request(stack.api.app).post(`${base}.json`).type('form').send(body));
      expect([res.status, res.body.code], JSON.stringify(body)).to.deep.equal([400, 20001]);
    }
    expect((await client.queues.list()).length).to.equal(before);

    const q = await client.queues.create({ friendlyName: 'bad inputs' });
    const c = await wait(q.sid);
    await until(async () => (await client.queues(q.sid).fetch()).currentSize === 1 || null, 15_000, 'waiting');
    const mPath = `${base}/${q.sid}/Members/${callSid(c.callId)}.json`;
    for (const [body, code] of [
      [{}, 21205],
      [{ Url: 'not a url' }, 21205],
      [{ Url: 'ftp://127.0.0.1/x' }, 21205],
      [{ Url: web.url('/x'), Method: 'PUT' }, 20001],
      [{ Twiml: '<Response/>' }, 20001],
    ] as const) {
      const res = await auth(request(stack.api.app).post(mPath).type('form').send(body));
      expect([res.status, res.body.code], JSON.stringify(body)).to.deep.equal([400, code]);
    }
    const notMember = await auth(
      request(stack.api.app)
        .post(`${base}/${q.sid}/Members/${callSid(foreign.id)}.json`)
        .type('form')
        .send({ Url: web.url('/x') }),
    );
    expect([notMember.status, notMember.body.code]).to.deep.equal([404, 20404]);
    // nothing was dequeued
    await sleep(300);
    expect((await client.queues(q.sid).members.list()).map((m) => m.callSid)).to.deep.equal([callSid(c.callId)]);

    const wrong = twilioClient(api.baseUrl, sid, '0'.repeat(32));
    const e3 = await refusal(wrong.queues.list());
    expect([e3.status, e3.code]).to.deep.equal([401, 20003]);

    const bye = new twilio.twiml.VoiceResponse();
    bye.hangup();
    web.on('/bye', bye.toString());
    await client
      .queues(q.sid)
      .members('Front')
      .update({ url: web.url('/bye') });
    const r = await c.sipp;
    expect(r.code, r.errors + r.messages).to.equal(0);
  });
});
