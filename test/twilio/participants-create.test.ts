// Issue 36: POST Conferences/{CF or friendly name}/Participants.json with the official `twilio`
// client: the platform dials the participant (a sipp UAS on loopback that echoes RTP) into a room a
// TwiML caller (sipp with a tone peer) joined by name; the caller hears its tone come back through
// the room once the participant is in. Fetch by Label, the Participant's fields, and the refusals.
import { expect } from 'chai';
import twilio from 'twilio';
import { answeringUas, sipp, until } from '../../testkit/media-app/harness';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { restRefusal } from '../../testkit/twilio';
import { useTwilioRestStack, type TwilioRestStack } from '../../testkit/twiml/stack';
import { newestRoom } from '../../testkit/conference/rooms';
import { testDb } from '../../testkit/db';
import { conferencesRepo } from '../../core/repos/conferences';
import { callSid, fromSid, toSid } from '../../core/twilio/sids';

const { VoiceResponse } = twilio.twiml;

describe('twilio: POST Conferences/{…}/Participants.json (dial a participant in)', function () {
  this.timeout(120_000);
  let s: TwilioRestStack;

  useTwilioRestStack((x) => (s = x));

  const roomNamed = (name: string) => newestRoom(s.f.customer.id, name);

  it('dials a sipp UAS into the room a TwiML caller made by name: in the room (echoed tone heard), fetched by Label, ends with the room', async () => {
    const doc = new VoiceResponse();
    doc.dial().conference('Sales Room');
    s.app.on('/sales', doc.toString());
    const caller = await s.caller('/sales');
    const room = await roomNamed('Sales Room');
    await until(async () => ((await roomNamed('Sales Room')).status === 'progressing' ? true : null), 20_000, 'progressing');
    // alone in the room: the caller hears nothing of its own tone
    expect(caller.peer.voiced(await caller.peer.windowAfter(false, 75)), 'alone: silence').to.be.lessThan(5);

    const uasPort = await freePort();
    const uas = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(uasPort), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort()), '-rtp_echo'], { killAfterMs: 60_000 });
    await uas.port;
    // by friendly name, as Twilio apps address rooms
    const p = await s.client
      .conferences('Sales Room')
      .participants.create({ from: '+15550100000', to: `sip:agent@127.0.0.1:${uasPort}`, label: 'agent one', endConferenceOnExit: true, beep: 'false' });
    expect(p.callSid).to.match(/^CA[0-9a-f]{32}$/);
    expect(p).to.include({ accountSid: s.sid, conferenceSid: toSid('CF', room.id), label: 'agent one', status: 'queued', endConferenceOnExit: true, muted: false });
    const db = await testDb();
    await until(async () => ((await db('conferencecalls').where({ conference_id: room.id, status: 'joined' })).length === 2 ? true : null), 20_000, 'two joined');
    const call = await db('calls')
      .where({ id: fromSid('CA', p.callSid)! })
      .first();
    expect(call?.direction).to.equal('outgoing');
    // the participant is in the mix: the caller's tone comes back through it
    expect(caller.peer.voiced(await caller.peer.windowAfter(true)), 'the caller hears the participant (its echo)').to.be.greaterThan(15);
    const byLabel = await s.client.conferences(toSid('CF', room.id)).participants('agent one').fetch();
    expect(byLabel).to.include({ callSid: p.callSid, label: 'agent one', status: 'connected', endConferenceOnExit: true });
    const listed = await s.client.conferences(toSid('CF', room.id)).participants.list();
    expect(listed.map((x) => x.callSid)).to.have.members([p.callSid, callSid(caller.callId)]);
    // a second participant with the same label is refused
    const dup = await restRefusal(s.client.conferences(toSid('CF', room.id)).participants.create({ from: '+15550100000', to: `sip:other@127.0.0.1:${uasPort}`, label: 'agent one' }));
    expect([dup.status, dup.code]).to.deep.equal([400, 20001]);
    // endConferenceOnExit: the participant leaving ends the room; the caller's document ends, BYE to both
    await s.stack.platform.app.calls.get(fromSid('CA', p.callSid)!)?.hangup('normal');
    await until(async () => ((await roomNamed('Sales Room')).status === 'terminated' ? true : null), 10_000, 'terminated');
    expect((await caller.sipp).code).to.equal(0);
    expect((await uas.done).code).to.equal(0);
  });

  it('bad input: 20404 for a missing or ended room, Twilio codes for To/From, 20001 for unsupported parameters; nothing is made', async () => {
    const db = await testDb();
    const calls = async () => (await db('calls').where({ customer_id: s.f.customer.id })).length;
    const rooms = async () => (await db('conferences').where({ customer_id: s.f.customer.id })).length;
    const ended = await conferencesRepo(db).create({ customer_id: s.f.customer.id, type: 'conference', name: 'over', status: 'terminated' });
    const before = [await calls(), await rooms()];
    const missing = await restRefusal(s.client.conferences('CF' + '0'.repeat(32)).participants.create({ from: '+15550100000', to: '+15550100001' }));
    expect([missing.status, missing.code]).to.deep.equal([404, 20404]);
    const over = await restRefusal(s.client.conferences(toSid('CF', ended.id)).participants.create({ from: '+15550100000', to: '+15550100001' }));
    expect([over.status, over.code]).to.deep.equal([404, 20404]);
    const noTo = await restRefusal(s.client.conferences('new room').participants.create({ from: '+15550100000', to: '' }));
    expect([noTo.status, noTo.code]).to.deep.equal([400, 21201]);
    const badFrom = await restRefusal(s.client.conferences('new room').participants.create({ from: 'not a number', to: '+15550100001' }));
    expect([badFrom.status, badFrom.code]).to.deep.equal([400, 21212]);
    const wait = await restRefusal(s.client.conferences('new room').participants.create({ from: '+15550100000', to: '+15550100001', waitUrl: 'http://127.0.0.1/wait' }));
    expect([wait.status, wait.code]).to.deep.equal([400, 20001]);
    expect(wait.message).to.match(/WaitUrl/);
    const moderated = await restRefusal(s.client.conferences('new room').participants.create({ from: '+15550100000', to: '+15550100001', startConferenceOnEnter: false }));
    expect([moderated.status, moderated.code]).to.deep.equal([400, 20001]);
    const longName = await restRefusal(s.client.conferences('n'.repeat(129)).participants.create({ from: '+15550100000', to: '+15550100001' }));
    expect([longName.status, longName.code]).to.deep.equal([400, 20001]);
    const label = await restRefusal(s.client.conferences('new room').participants.create({ from: '+15550100000', to: '+15550100001', label: 'l'.repeat(129) }));
    expect([label.status, label.code]).to.deep.equal([400, 20001]);
    expect([await calls(), await rooms()], 'no call and no room made').to.deep.equal(before);
  });
});
