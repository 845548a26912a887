// Issue 36: REST Participants update EndConferenceOnExit and BeepOnExit (the official twilio client
// against control-api on loopback). sipp callers (real SIP on loopback, a media-app node, real
// Postgres and Redis) in a room made by TwiML <Dial><Conference>: a participant made to end the room
// ends it when it leaves; one made to beep on exit is heard leaving by a listener (its audio checked).
import { expect } from 'chai';
import request from 'supertest';
import twilio from 'twilio';
import { accountSid, callSid, toSid } from '../../core/twilio/sids';
import { sleep, until } from '../../testkit/media-app/harness';
import { type PlacedCall } from '../../testkit/streams/support';
import { useTwilioRestStack, type TwilioRestStack } from '../../testkit/twiml/stack';
import { joinedRoom } from '../../testkit/conference/rooms';

const { VoiceResponse } = twilio.twiml;

describe('twilio: Participants update EndConferenceOnExit, BeepOnExit', function () {
  this.timeout(180_000);
  let s: TwilioRestStack;

  useTwilioRestStack((x) => (s = x));

  const caller = (path: string) => s.caller(path, { talk: false });
  const joined = (name: string, n: number) => joinedRoom(s.f.customer.id, name, n);

  it('BeepOnExit=true: the room hears the participant leave; EndConferenceOnExit=true: its leaving ends the room', async () => {
    const doc = new VoiceResponse();
    doc.dial().conference('update room');
    s.app.on('/p', doc.toString());
    const listener = await caller('/p');
    await joined('update room', 1);
    const beeper = await caller('/p');
    const ender = await caller('/p');
    const roomId = await joined('update room', 3);
    const cf = toSid('CF', roomId);
    const upd = (c: PlacedCall, body: Record<string, string>) =>
      request(s.stack.api.app)
        .post(`/2010-04-01/Accounts/${accountSid(s.f.customer.id)}/Conferences/${cf}/Participants/${callSid(c.callId)}.json`)
        .auth(accountSid(s.f.customer.id), s.token)
        .type('form')
        .send(body);

    // bad values: 20001, nothing changed
    const bads: Record<string, string>[] = [{ EndConferenceOnExit: 'maybe' }, { BeepOnExit: 'loud' }];
    for (const body of bads) {
      const res = await upd(ender, body);
      expect([res.status, res.body.code], JSON.stringify(body)).to.deep.equal([400, 20001]);
    }
    expect((await s.client.conferences(cf).participants(callSid(ender.callId)).fetch()).endConferenceOnExit).to.equal(false);

    const b = await upd(beeper, { BeepOnExit: 'true' });
    expect(b.status, JSON.stringify(b.body)).to.equal(200);
    await sleep(500);
    let from = listener.peer.levels.length;
    await s.hangup(beeper);
    await joined('update room', 2);
    await sleep(2000);
    expect(listener.peer.voiced(from), 'the exit beep').to.be.within(5, 40);

    const e = await s.client.conferences(cf).participants(callSid(ender.callId)).update({ endConferenceOnExit: true });
    expect(e.endConferenceOnExit).to.equal(true);
    expect((await s.client.conferences(cf).participants(callSid(ender.callId)).fetch()).endConferenceOnExit).to.equal(true);
    from = listener.peer.levels.length;
    await s.hangup(ender);
    await until(async () => ((await s.client.conferences(cf).fetch()).status === 'completed' ? true : null), 20_000, 'the room ends');
    expect(listener.peer.voiced(from), 'no beep: the ender did not ask').to.be.lessThan(3);
    // the listener's document goes on after its <Dial> (nothing left: it hangs up)
    for (const c of [listener, beeper, ender]) expect((await c.sipp).code).to.equal(0);
  });
});
