import { expect } from 'chai';
import { testDb, truncateAll } from '../../testkit/db';
import { customersRepo } from '../../core/repos/customers';
import { callsRepo, callJson } from '../../core/repos/calls';
import { canTransition, causeFromSipStatus, hangupReasonFor, hangupByFor } from '../../core/calls/model';

describe('core/calls model', () => {
  it('allows only the transitions voipbin allows', () => {
    expect(canTransition('dialing', 'ringing')).to.equal(true);
    expect(canTransition('ringing', 'progressing')).to.equal(true);
    expect(canTransition('progressing', 'ringing')).to.equal(false);
    expect(canTransition('progressing', 'canceling')).to.equal(false);
    expect(canTransition('hangup', 'progressing')).to.equal(false);
    expect(canTransition('dialing', 'dialing')).to.equal(false);
  });

  it('computes hangup_reason from direction, last status and cause', () => {
    expect(hangupReasonFor('outgoing', 'ringing', 'no_answer')).to.equal('noanswer');
    expect(hangupReasonFor('outgoing', 'ringing', 'call_rejected')).to.equal('noanswer');
    expect(hangupReasonFor('outgoing', 'dialing', 'user_busy')).to.equal('busy');
    expect(hangupReasonFor('outgoing', 'dialing', 'unknown')).to.equal('dialout');
    expect(hangupReasonFor('outgoing', 'dialing', 'failure')).to.equal('failed');
    expect(hangupReasonFor('outgoing', 'progressing', 'duration_timeout')).to.equal('timeout');
    expect(hangupReasonFor('outgoing', 'terminating', 'amd')).to.equal('amd');
    expect(hangupReasonFor('outgoing', 'canceling', 'normal_clearing')).to.equal('cancel');
    expect(hangupReasonFor('incoming', 'ringing', 'user_busy')).to.equal('busy');
    // refused with 603 before the answer (TwiML <Reject>'s default): no answer, as Twilio's no-answer
    expect(hangupReasonFor('incoming', 'ringing', 'call_rejected')).to.equal('noanswer');
    expect(hangupReasonFor('incoming', 'progressing', 'normal_clearing')).to.equal('normal');
    expect(hangupByFor('terminating')).to.equal('local');
    expect(hangupByFor('progressing')).to.equal('remote');
    expect(causeFromSipStatus(486)).to.equal('user_busy');
    expect(causeFromSipStatus(480)).to.equal('no_answer');
    expect(causeFromSipStatus(503)).to.equal('failure');
  });
});

describe('core/repos/calls (real Postgres)', () => {
  let customerId: string;
  beforeEach(async () => {
    const db = await testDb();
    await truncateAll(db);
    const c = await customersRepo(db).create({ email: `c${Date.now()}@example.com`, name: 'c', status: 'active' } as never);
    customerId = c.id;
  });

  it('walks dialing → ringing → progressing → hangup once, stamping times', async () => {
    const calls = callsRepo(await testDb());
    const call = await calls.create({
      customer_id: customerId,
      source: { type: 'tel', target: '+15550001' },
      destination: { type: 'tel', target: '+15550002' },
      direction: 'outgoing',
    });
    expect(call.status).to.equal('dialing');
    expect((await calls.transition(call.id, 'ringing')).changed).to.equal(true);
    const dup = await calls.transition(call.id, 'ringing');
    expect(dup.changed).to.equal(false);
    const up = await calls.transition(call.id, 'progressing');
    expect(up.changed).to.equal(true);
    expect(up.call!.tm_progressing).to.be.instanceOf(Date);
    expect((await calls.transition(call.id, 'ringing')).changed, 'no way back').to.equal(false);
    const h1 = await calls.hangup(call.id, 'normal_clearing');
    expect(h1.changed).to.equal(true);
    expect(h1.call).to.include({ status: 'hangup', hangup_by: 'remote', hangup_reason: 'normal' });
    const h2 = await calls.hangup(call.id, 'failure');
    expect(h2.changed, 'a second hangup changes nothing').to.equal(false);
    expect(h2.call!.hangup_reason).to.equal('normal');
    const json = callJson(h2.call!);
    expect(json.tm_hangup).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    expect(json.tm_delete).to.equal(null);
    expect(json.source).to.deep.equal({ type: 'tel', target: '+15550001' });
  });

  it('records a local cancel as hangup_by local, reason cancel', async () => {
    const calls = callsRepo(await testDb());
    const call = await calls.create({
      customer_id: customerId,
      source: { type: 'tel', target: '+15550001' },
      destination: { type: 'sip', target: 'sip:bob@127.0.0.1' },
      direction: 'outgoing',
    });
    await calls.transition(call.id, 'canceling');
    const h = await calls.hangup(call.id, 'normal_clearing');
    expect(h.call).to.include({ hangup_by: 'local', hangup_reason: 'cancel' });
    expect(await calls.countLive(customerId)).to.equal(0);
  });

  it('keeps chained calls and recordings', async () => {
    const calls = callsRepo(await testDb());
    const a = await calls.create({ customer_id: customerId, source: { type: 'tel', target: '+1' }, destination: { type: 'tel', target: '+2' }, direction: 'outgoing' });
    const b = await calls.create({ customer_id: customerId, source: { type: 'tel', target: '+1' }, destination: { type: 'tel', target: '+3' }, direction: 'outgoing', master_call_id: a.id });
    await calls.addChained(a.id, b.id);
    const rid = '11111111-1111-4111-8111-111111111111';
    await calls.setRecording(a.id, rid, true);
    let row = (await calls.get(a.id))!;
    expect(row.chained_call_ids).to.deep.equal([b.id]);
    expect(row.recording_id).to.equal(rid);
    await calls.setRecording(a.id, rid, false);
    row = (await calls.get(a.id))!;
    expect(row.recording_id).to.equal('00000000-0000-0000-0000-000000000000');
    expect(row.recording_ids).to.deep.equal([rid]);
    expect(await calls.countLive(customerId)).to.equal(2);
  });
});
