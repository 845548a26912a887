// Issue 36: <Conference statusCallbackEvent="mute hold">. A participant muted or held through the
// REST Participants update (the official twilio client against control-api on loopback) sends
// participant-mute / participant-unmute / participant-hold / participant-unhold to the room's
// statusCallback, signed (twilio.validateRequest), in order with join and leave; a sipp caller (real
// SIP on loopback, a media-app node, real Postgres and Redis) answers the hold re-INVITEs.
import { expect } from 'chai';
import twilio from 'twilio';
import { compileTwiml } from '../../core/twiml/compile';
import { callSid, toSid } from '../../core/twilio/sids';
import { testDb } from '../../testkit/db';
import { sleep, until } from '../../testkit/media-app/harness';
import { answerReinvite } from '../../testkit/media-app/sipp-steps';
import { useTwilioRestStack, type TwilioRestStack } from '../../testkit/twiml/stack';
import { expectParticipantLifecycle } from '../../testkit/twiml/participant-events';

const { VoiceResponse } = twilio.twiml;

describe('TwiML <Conference statusCallbackEvent="mute hold">: compiler', () => {
  it('mute and hold are events now', () => {
    const r = new VoiceResponse();
    r.dial().conference({ statusCallback: 'https://cb.example.com/e', statusCallbackEvent: ['mute', 'hold', 'join'] }, 'r');
    expect(compileTwiml(r.toString())[0]!.option).to.deep.include({ status_callback: { url: 'https://cb.example.com/e', method: 'POST', events: ['mute', 'hold', 'join'] } });
  });
});

describe('TwiML <Conference statusCallbackEvent="mute hold"> with sipp callers and REST updates', function () {
  this.timeout(180_000);
  let s: TwilioRestStack;

  useTwilioRestStack((x) => (s = x));

  it('participant-mute, -unmute, -hold, -unhold between join and leave, signed, Muted/Hold as they then stood', async () => {
    const doc = new VoiceResponse();
    doc.dial().conference({ statusCallback: '/pe', statusCallbackEvent: ['join', 'leave', 'mute', 'hold'] }, 'mute hold room');
    s.app.on('/m', doc.toString());
    s.app.on('/pe', '<Response/>');
    const c = await s.caller('/m', {
      steps: (port) => `${answerReinvite(port, 'inactive', 2)}\n${answerReinvite(port, 'sendrecv', 3)}`,
    });
    const db = await testDb();
    const room = await until(async () => ((await db('conferences').where({ customer_id: s.f.customer.id, name: 'mute hold room' }).first()) as { id: string } | undefined) ?? null, 20_000, 'room');
    const cf = toSid('CF', room.id);
    const p = () => s.client.conferences(cf).participants(callSid(c.callId));
    // the room is made before its participant: a 20404 until then
    await until(
      async () =>
        (
          await p()
            .fetch()
            .catch(() => null)
        )?.status === 'connected'
          ? true
          : null,
      20_000,
      'connected',
    );
    expect((await p().update({ muted: true })).muted).to.equal(true);
    expect((await p().update({ muted: false })).muted).to.equal(false);
    expect((await p().update({ hold: true })).hold).to.equal(true);
    expect((await p().update({ hold: false })).hold).to.equal(false);
    // the same state again changes nothing: no callback
    expect((await p().update({ muted: false })).muted).to.equal(false);
    await sleep(500);
    await s.stack.platform.app.calls.get(c.callId)?.hangup('normal');
    const got = await until(
      async () => {
        const r = s.app.requests.filter((x) => x.path === '/pe');
        return r.length >= 6 ? r : null;
      },
      20_000,
      'six callbacks',
    );
    await sleep(1000);
    expect(s.app.requests.filter((x) => x.path === '/pe').length, 'no more than six').to.equal(6);
    expectParticipantLifecycle(got, { ConferenceSid: cf, CallSid: callSid(c.callId), FriendlyName: 'mute hold room' });
    const res = await c.sipp;
    expect(res.code, res.errors + res.messages).to.equal(0);
  });
});
