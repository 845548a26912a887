import { expect } from 'chai';
import { Queue } from 'bullmq';
import { truncateAll } from '../../../testkit/db';
import { setRates } from '../../../core/billing/rates';
import { flowsRepo } from '../../../core/repos/flows';
import { ORIGINATE_QUEUE } from '../../../core/commands/contracts';
import type { Fixture } from '../../../testkit/api';
import { eventTypes, fixture, fund, ownedNumber, request, settle, startHarness, type Harness } from './support';

/** A customer owning a number, with `micros` of balance. */
async function sender(h: Harness, micros: number) {
  const f = await fixture(h);
  const n = await ownedNumber(h, f);
  await fund(h, f, micros);
  return { f, n };
}

/** POST /v1.0/messages as the customer. */
const sendMessage = (h: Harness, f: Fixture, body: unknown) =>
  request(h.server)
    .post('/v1.0/messages')
    .query({ accesskey: f.accesskey })
    .send(body as object);

describe('messaging: SMS through a Twilio-API server', function () {
  this.timeout(20_000);
  let h: Harness;

  before(async () => {
    h = await startHarness();
    setRates({ sms: 10_000 });
  });
  after(async () => {
    setRates(null);
    await h.close();
  });
  beforeEach(async () => {
    await truncateAll();
    h.twilio.requests.length = 0;
  });

  it('sends, follows status callbacks to delivered, fails a refused target, charges, threads and publishes', async () => {
    const { f, n } = await sender(h, 1_000_000);
    const res = await sendMessage(h, f, {
      source: { type: 'tel', target: n.number },
      destinations: [
        { type: 'tel', target: '+15557771234' },
        { type: 'tel', target: '+15557770000' },
      ],
      text: 'hello there',
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.direction).to.equal('outbound');
    expect(res.body.targets.map((t: { status: string }) => t.status)).to.deep.equal(['queued', 'queued']);
    await settle(h);

    // What the provider received: the right account path, basic auth, form fields and a callback URL on our public URL.
    const sent = h.twilio.sent('+15557771234');
    expect(sent.path).to.equal(`/2010-04-01/Accounts/${h.twilio.accountSid}/Messages.json`);
    expect(sent.authorization).to.equal('Basic ' + Buffer.from(`${h.twilio.accountSid}:${h.twilio.authToken}`).toString('base64'));
    expect(sent.form).to.include({ To: '+15557771234', From: n.number, Body: 'hello there' });
    expect(sent.form.StatusCallback).to.match(new RegExp(`^${h.base}/hooks/sms/twilio/status/[0-9a-f-]{36}$`));

    let m = (await request(h.server).get(`/v1.0/messages/${res.body.id}`).query({ accesskey: f.accesskey })).body;
    expect(m.targets[0].status).to.equal('queued');
    expect(m.targets[1].status, 'refused by the provider').to.equal('failed');

    expect((await h.twilio.report('+15557771234', 'sent')).status).to.equal(204);
    m = (await request(h.server).get(`/v1.0/messages/${res.body.id}`).query({ accesskey: f.accesskey })).body;
    expect(m.targets[0].status).to.equal('sent');
    expect((await h.twilio.report('+15557771234', 'delivered')).status).to.equal(204);
    // A late "sent" after delivered must not move it back.
    expect((await h.twilio.report('+15557771234', 'sent')).status).to.equal(204);
    m = (await request(h.server).get(`/v1.0/messages/${res.body.id}`).query({ accesskey: f.accesskey })).body;
    expect(m.targets[0].status).to.equal('delivered');

    // Billing: one ledger row, 2 targets x 1 segment x 10,000 micros.
    const bills = await h.t.ctx.db('billings').where({ reference_id: res.body.id });
    expect(bills).to.have.length(1);
    expect(Number(bills[0].amount_credit)).to.equal(-20_000);
    expect(bills[0].cost_type).to.equal('sms');

    // Threads: one conversation per destination; the delivered one is done, the failed one failed.
    const convs = (await request(h.server).get('/v1.0/conversations').query({ accesskey: f.accesskey })).body.result;
    expect(convs).to.have.length(2);
    for (const c of convs) {
      const msgs = (await request(h.server).get(`/v1.0/conversations/${c.id}/messages`).query({ accesskey: f.accesskey })).body.result;
      expect(msgs).to.have.length(1);
      expect(msgs[0].direction).to.equal('outgoing');
      expect(msgs[0].status).to.equal(c.peer.target === '+15557771234' ? 'done' : 'failed');
    }

    const types = (await eventTypes(h)).map((e) => e.type);
    expect(types).to.include.members(['message_created', 'message_updated', 'conversation_created', 'conversation_message_created', 'conversation_message_updated']);
  });

  it('marks a target gw_timeout when the provider answers 5xx, then settles it on a late failure report', async () => {
    const { f, n } = await sender(h, 1_000_000);
    const res = await sendMessage(h, f, { source: { type: 'tel', target: n.number }, destinations: [{ type: 'tel', target: '+15557779999' }], text: 'x' });
    expect(res.status).to.equal(200);
    await settle(h);
    let m = (await request(h.server).get(`/v1.0/messages/${res.body.id}`).query({ accesskey: f.accesskey })).body;
    expect(m.targets[0].status).to.equal('gw_timeout');
    const cb = h.twilio.requests[0]!.form.StatusCallback!;
    expect((await h.twilio.post(cb, { AccountSid: h.twilio.accountSid, MessageSid: 'SMlate', MessageStatus: 'undelivered', ErrorCode: '30003' })).status).to.equal(204);
    m = (await request(h.server).get(`/v1.0/messages/${res.body.id}`).query({ accesskey: f.accesskey })).body;
    expect(m.targets[0].status).to.equal('failed');
    const row = await h.t.ctx.db('message_targets').where({ message_id: res.body.id }).first();
    expect(row!.error).to.equal('twilio error 30003');
  });

  it('refuses callbacks with a bad signature, for unknown targets and for another send', async () => {
    const { f, n } = await sender(h, 1_000_000);
    const res = await sendMessage(h, f, { source: { type: 'tel', target: n.number }, destinations: [{ type: 'tel', target: '+15557771111' }], text: 'x' });
    await settle(h);
    const sent = h.twilio.sent('+15557771111');
    const form = { AccountSid: h.twilio.accountSid, MessageSid: sent.sid, MessageStatus: 'delivered' };
    expect((await h.twilio.post(sent.form.StatusCallback!, form, 'wrong-token')).status).to.equal(403);
    // Signed for another URL: the signature covers the URL.
    const other = sent.form.StatusCallback!.replace(/[0-9a-f-]{36}$/, '00000000-0000-4000-8000-000000000000');
    expect((await h.twilio.post(other, form)).status).to.equal(404);
    expect((await h.twilio.post(sent.form.StatusCallback!, { ...form, MessageSid: 'SMother' })).status).to.equal(404);
    expect((await h.twilio.post(sent.form.StatusCallback!, { AccountSid: h.twilio.accountSid })).status).to.equal(400);
    const unsigned = await fetch(sent.form.StatusCallback!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
    expect(unsigned.status).to.equal(403);
    const m = (await request(h.server).get(`/v1.0/messages/${res.body.id}`).query({ accesskey: f.accesskey })).body;
    expect(m.targets[0].status).to.equal('queued');
  });

  it('402 when the balance is short: nothing written, nothing sent', async () => {
    const { f, n } = await sender(h, 15_000);
    const res = await sendMessage(h, f, {
      source: { type: 'tel', target: n.number },
      destinations: [
        { type: 'tel', target: '+15557771234' },
        { type: 'tel', target: '+15557771235' },
      ],
      text: 'hi',
    });
    expect(res.status).to.equal(402);
    expect(res.body.error.reason).to.equal('INSUFFICIENT_BALANCE');
    expect(Number((await h.t.ctx.db('messages').count({ n: '*' }).first())?.n)).to.equal(0);
    expect(Number((await h.t.ctx.db('message_targets').count({ n: '*' }).first())?.n)).to.equal(0);
    expect(Number((await h.t.ctx.db('conversations').count({ n: '*' }).first())?.n)).to.equal(0);
    expect(Number((await h.t.ctx.db('conversation_messages').count({ n: '*' }).first())?.n)).to.equal(0);
    expect(h.twilio.requests).to.have.length(0);
    // One target fits the balance.
    const ok = await sendMessage(h, f, { source: { type: 'tel', target: n.number }, destinations: [{ type: 'tel', target: '+15557771234' }], text: 'hi' });
    expect(ok.status).to.equal(200);
    await settle(h);
  });

  it('inbound SMS: creates the message and its thread, starts the number’s message flow once per MessageSid', async () => {
    const f = await fixture(h);
    const flow = await flowsRepo(h.t.ctx.db).create({
      customer_id: f.customer.id,
      actions: [{ id: '11111111-1111-4111-8111-111111111111', next_id: '00000000-0000-0000-0000-000000000000', type: 'stop', option: {} }] as never,
      persist: true,
    });
    const n = await ownedNumber(h, f, { message_flow_id: flow.id });
    const form = { AccountSid: h.twilio.accountSid, MessageSid: 'SMin0001', From: '+15558880001', To: n.number, Body: 'hi from a phone', NumSegments: '1' };
    const r = await h.twilio.post(`${h.base}/hooks/sms/twilio/inbound`, form);
    expect(r.status).to.equal(200);
    expect(r.type).to.contain('xml');
    expect(r.body).to.contain('<Response>');
    const again = await h.twilio.post(`${h.base}/hooks/sms/twilio/inbound`, form);
    expect(again.status).to.equal(200);

    const list = (await request(h.server).get('/v1.0/messages').query({ accesskey: f.accesskey })).body.result;
    expect(list).to.have.length(1);
    expect(list[0]).to.include({ direction: 'inbound', text: 'hi from a phone' });
    expect(list[0].source.target).to.equal('+15558880001');
    expect(list[0].targets[0]).to.include({ status: 'received' });

    const convs = (await request(h.server).get('/v1.0/conversations').query({ accesskey: f.accesskey })).body.result;
    expect(convs).to.have.length(1);
    expect(convs[0].self.target).to.equal(n.number);
    expect(convs[0].peer.target).to.equal('+15558880001');
    const msgs = (await request(h.server).get(`/v1.0/conversations/${convs[0].id}/messages`).query({ accesskey: f.accesskey })).body.result;
    expect(msgs.map((x: { direction: string; text: string }) => [x.direction, x.text])).to.deep.equal([['incoming', 'hi from a phone']]);

    const afs = await h.t.ctx.db('activeflows').where({ customer_id: f.customer.id });
    expect(afs).to.have.length(1);
    expect(afs[0]).to.include({ flow_id: flow.id, reference_type: 'conversation', reference_id: convs[0].id, status: 'running' });
    expect(afs[0].variables['svc.conversation_message.text']).to.equal('hi from a phone');
    const q = new Queue(ORIGINATE_QUEUE, { connection: h.t.ctx.redis, prefix: `${h.t.ctx.config.redisKeyPrefix}bull` });
    const job = await q.getJob(`activeflow-start-${afs[0].id}`);
    await q.close();
    expect(job?.data.command).to.deep.include({ type: 'activeflow.start', activeflowId: afs[0].id, customerId: f.customer.id });

    // A reply in the thread goes out as an SMS from our number to the peer.
    await fund(h, f, 100_000);
    const reply = await request(h.server).post(`/v1.0/conversations/${convs[0].id}/messages`).query({ accesskey: f.accesskey }).send({ text: 'thanks!' });
    expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
    expect(reply.body).to.include({ direction: 'outgoing', conversation_id: convs[0].id, text: 'thanks!', reference_type: 'message' });
    await settle(h);
    expect(h.twilio.sent('+15558880001').form).to.include({ From: n.number, Body: 'thanks!' });
    const after = (await request(h.server).get(`/v1.0/conversations/${convs[0].id}/messages`).query({ accesskey: f.accesskey })).body.result;
    expect(after).to.have.length(2);
  });

  it('inbound to a number nobody owns, bad signature or missing fields is refused', async () => {
    const form = { AccountSid: h.twilio.accountSid, MessageSid: 'SMin0002', From: '+15558880001', To: '+15550009876', Body: 'x' };
    expect((await h.twilio.post(`${h.base}/hooks/sms/twilio/inbound`, form)).status).to.equal(404);
    expect((await h.twilio.post(`${h.base}/hooks/sms/twilio/inbound`, form, 'nope')).status).to.equal(403);
    expect((await h.twilio.post(`${h.base}/hooks/sms/twilio/inbound`, { AccountSid: h.twilio.accountSid, Body: 'x' })).status).to.equal(400);
    expect((await h.twilio.post(`${h.base}/hooks/sms/telnyx/inbound`, form)).status).to.equal(404);
    expect(Number((await h.t.ctx.db('messages').count({ n: '*' }).first())?.n)).to.equal(0);
  });

  it('bad input and other customers’ messages', async () => {
    const f = await fixture(h);
    const g = await fixture(h);
    const n = await ownedNumber(h, f);
    const theirs = await ownedNumber(h, g);
    const virtual = await ownedNumber(h, f, { type: 'virtual' });
    await fund(h, f, 1_000_000);
    const post = (body: unknown) => sendMessage(h, f, body as object);
    const good = { source: { type: 'tel', target: n.number }, destinations: [{ type: 'tel', target: '+15557771234' }], text: 'x' };
    const bad: [unknown, string][] = [
      [{ ...good, source: { type: 'tel', target: theirs.number } }, 'INVALID_ARGUMENT'],
      [{ ...good, source: { type: 'tel', target: virtual.number } }, 'INVALID_ARGUMENT'],
      [{ ...good, source: { type: 'tel', target: '5551234' } }, 'INVALID_ARGUMENT'],
      [{ ...good, destinations: [{ type: 'tel', target: '+1 555 777' }] }, 'INVALID_ARGUMENT'],
      [{ ...good, destinations: [{ type: 'email', target: 'a@b.test' }] }, 'INVALID_ARGUMENT'],
      [{ ...good, destinations: [] }, 'INVALID_ARGUMENT'],
      [{ ...good, text: '' }, 'INVALID_ARGUMENT'],
      [{ ...good, text: 'x'.repeat(1601) }, 'INVALID_ARGUMENT'],
      [{ source: good.source, text: 'x' }, 'INVALID_ARGUMENT'],
      [{ ...good, extra: 1 }, 'INVALID_ARGUMENT'],
      [{ ...good, source: { ...good.source, bogus: 1 } }, 'INVALID_ARGUMENT'],
    ];
    for (const [body, reason] of bad) {
      const r = await post(body);
      expect(r.status, JSON.stringify(body)).to.equal(400);
      expect(r.body.error.reason).to.equal(reason);
    }
    const raw = await request(h.server).post('/v1.0/messages').query({ accesskey: f.accesskey }).set('content-type', 'application/json').send('{nope');
    expect(raw.status).to.equal(400);
    expect(h.twilio.requests).to.have.length(0);

    const mine = await post(good);
    expect(mine.status).to.equal(200);
    await settle(h);
    expect((await request(h.server).get('/v1.0/messages/not-a-uuid').query({ accesskey: f.accesskey })).body.error.reason).to.equal('INVALID_ID');
    const cross = await request(h.server).get(`/v1.0/messages/${mine.body.id}`).query({ accesskey: g.accesskey });
    expect(cross.status).to.equal(404);
    expect(cross.body.error.reason).to.equal('MESSAGE_NOT_FOUND');
    expect((await request(h.server).delete(`/v1.0/messages/${mine.body.id}`).query({ accesskey: g.accesskey })).status).to.equal(404);
    expect((await request(h.server).get('/v1.0/messages').query({ accesskey: g.accesskey })).body.result).to.have.length(0);
    expect((await request(h.server).get('/v1.0/messages')).status).to.equal(401);

    const del = await request(h.server).delete(`/v1.0/messages/${mine.body.id}`).query({ accesskey: f.accesskey });
    expect(del.status).to.equal(200);
    expect(del.body.tm_delete).to.not.equal('9999-01-01 00:00:00.000000');
    expect((await request(h.server).get(`/v1.0/messages/${mine.body.id}`).query({ accesskey: f.accesskey })).status).to.equal(404);
  });
});

describe('messaging: no SMS provider configured', function () {
  this.timeout(20_000);
  let h: Harness;
  before(async () => {
    h = await startHarness({ provider: false });
  });
  after(async () => h.close());

  it('503 SERVICE_UNAVAILABLE and nothing written', async () => {
    await truncateAll();
    const { f, n } = await sender(h, 1_000_000);
    const r = await sendMessage(h, f, { source: { type: 'tel', target: n.number }, destinations: [{ type: 'tel', target: '+15557771234' }], text: 'x' });
    expect(r.status).to.equal(503);
    expect(Number((await h.t.ctx.db('messages').count({ n: '*' }).first())?.n)).to.equal(0);
  });
});
