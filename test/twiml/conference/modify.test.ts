// Issue 36: <Conference statusCallbackEvent="modify">. A REST Participants update (the official twilio
// client against control-api on loopback) that changes a participant's EndConferenceOnExit, BeepOnExit
// or Coaching sends participant-modify to the room's statusCallback with the participant as it then
// stands, signed (twilio.validateRequest), in order with join; an update that changes nothing, a mute
// (its own event) and a refused update send none. Two sipp callers on a media-app node (real SIP on
// loopback, real Postgres and Redis), on both media backends (on fsmrf, issue 55, Coaching is the
// switch's conference relate).
import { expect } from 'chai';
import twilio from 'twilio';
import { compileTwiml } from '../../../core/twiml/compile';
import { callSid, toSid } from '../../../core/twilio/sids';
import { testDb } from '../../../testkit/db';
import { sleep, until } from '../../../testkit/media-app/harness';
import type { PlacedCall } from '../../../testkit/streams/support';
import { useTwilioRestStack, type TwilioRestStack } from '../../../testkit/twiml/stack';

const { VoiceResponse } = twilio.twiml;

describe('TwiML <Conference statusCallbackEvent="modify">: compiler', () => {
  it('modify is an event now', () => {
    const r = new VoiceResponse();
    r.dial().conference({ statusCallback: 'https://cb.example.com/e', statusCallbackEvent: ['modify'] }, 'r');
    expect(compileTwiml(r.toString())[0]!.option).to.deep.include({ status_callback: { url: 'https://cb.example.com/e', method: 'POST', events: ['modify'] } });
  });
});

for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML <Conference statusCallbackEvent="modify"> with sipp callers and REST updates (${backend} media backend)`, function () {
    this.timeout(180_000);
    let s: TwilioRestStack;

    useTwilioRestStack((x) => (s = x), undefined, { mediaServer: backend });

    it('participant-modify for each change of EndConferenceOnExit, Coaching, BeepOnExit; none for no change, a mute or a refusal', async () => {
      const doc = new VoiceResponse();
      doc.dial().conference({ statusCallback: '/me', statusCallbackEvent: ['join', 'modify'] }, 'modify room');
      s.app.on('/m', doc.toString());
      s.app.on('/me', '<Response/>');
      const a = await s.caller('/m');
      const b = await s.caller('/m');
      const db = await testDb();
      const room = await until(async () => ((await db('conferences').where({ customer_id: s.f.customer.id, name: 'modify room' }).first()) as { id: string } | undefined) ?? null, 20_000, 'room');
      const cf = toSid('CF', room.id);
      const p = (c: PlacedCall) => s.client.conferences(cf).participants(callSid(c.callId));
      const events = () => s.app.requests.filter((x) => x.path === '/me');
      await until(() => (events().length >= 2 ? true : null), 20_000, 'two joins');
      const modifies = () => events().filter((r) => r.params.StatusCallbackEvent === 'participant-modify');
      const next = async (n: number) => until(() => (modifies().length >= n ? modifies()[n - 1]! : null), 10_000, `modify ${n}`);

      expect((await p(a).update({ endConferenceOnExit: true })).endConferenceOnExit).to.equal(true);
      expect((await next(1)).params).to.include({ CallSid: callSid(a.callId), EndConferenceOnExit: 'true', Coaching: 'false', Muted: 'false', Hold: 'false' });
      // the same value again changes nothing; a mute is participant-mute (not asked for here)
      await p(a).update({ endConferenceOnExit: true });
      await p(a).update({ muted: true });
      // refused (a participant cannot coach itself): 20001 and nothing sent
      const refused = await p(a)
        .update({ coaching: true, callSidToCoach: callSid(a.callId) })
        .then(
          () => null,
          (e: { status?: number; code?: number }) => e,
        );
      expect(refused?.status).to.equal(400);
      expect(refused?.code).to.equal(20001);
      await sleep(700);
      expect(modifies().length, 'no modify for no change, a mute or a refusal').to.equal(1);

      // coaching on both backends (the engine's whisper, the switch's relate: issue 55)
      expect((await p(a).update({ coaching: true, callSidToCoach: callSid(b.callId) })).coaching).to.equal(true);
      expect((await next(2)).params).to.include({ CallSid: callSid(a.callId), Coaching: 'true', EndConferenceOnExit: 'true', Muted: 'true' });
      const n = 3;
      await p(b).update({ beepOnExit: true });
      expect((await next(n)).params).to.include({ CallSid: callSid(b.callId), Coaching: 'false', EndConferenceOnExit: 'false' });

      const got = events();
      expect(got.map((r) => r.params.StatusCallbackEvent)).to.deep.equal(['participant-join', 'participant-join', ...Array<string>(n).fill('participant-modify')]);
      expect(got.map((r) => Number(r.params.SequenceNumber))).to.deep.equal(Array.from({ length: n + 2 }, (_, i) => i + 1));
      for (const r of got) {
        expect(r.signed, `${r.params.StatusCallbackEvent} signed`).to.equal(true);
        expect(r.params).to.include({ ConferenceSid: cf, FriendlyName: 'modify room' });
      }
      await s.stack.platform.app.calls.get(a.callId)?.hangup('normal');
      await s.stack.platform.app.calls.get(b.callId)?.hangup('normal');
    });
  });
