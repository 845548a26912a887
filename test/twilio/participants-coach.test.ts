// Issue 36: REST Participants update Coaching + CallSidToCoach (the official twilio client against
// control-api on loopback). sipp callers (real SIP on loopback, a media-app node, real Postgres and
// Redis) in a room made by TwiML <Dial><Conference>: a talking participant made a coach is heard by
// the coached participant only (audio checked), and by all again once Coaching=false. On both media
// backends (issue 55: on fsmrf, the switch's conference relate).
import { expect } from 'chai';
import request from 'supertest';
import twilio from 'twilio';
import { accountSid, callSid, toSid } from '../../core/twilio/sids';
import { sleep } from '../../testkit/media-app/harness';
import { type PlacedCall } from '../../testkit/streams/support';
import { useTwilioRestStack, type TwilioRestStack } from '../../testkit/twiml/stack';
import { joinedRoom } from '../../testkit/conference/rooms';

const { VoiceResponse } = twilio.twiml;

for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`twilio: Participants update Coaching, CallSidToCoach (${backend} media backend)`, function () {
    this.timeout(180_000);
    let s: TwilioRestStack;

    useTwilioRestStack((x) => (s = x), undefined, { mediaServer: backend });

    const caller = (talk: boolean) => s.caller('/p', { talk });
    const joined = (n: number) => joinedRoom(s.f.customer.id, 'coach room', n);

    /** Voiced packets each listener hears over 2 s. */
    async function heard(...who: PlacedCall[]): Promise<number[]> {
      const from = who.map((c) => c.peer.levels.length);
      await sleep(2000);
      return who.map((c, i) => c.peer.voiced(from[i]!));
    }

    it('Coaching=true with CallSidToCoach: only the coached hears the coach; Coaching=false: all do; bad values 20001', async () => {
      const doc = new VoiceResponse();
      doc.dial().conference('coach room');
      s.app.on('/p', doc.toString());
      const agent = await caller(false);
      const customer = await caller(false);
      await joined(2);
      const coach = await caller(true);
      const cf = toSid('CF', await joined(3));
      await sleep(1000);
      expect(await heard(agent, customer), 'before: both hear the talker').to.satisfy((v: number[]) => v.every((n) => n > 15));

      const path = `/2010-04-01/Accounts/${accountSid(s.f.customer.id)}/Conferences/${cf}/Participants/${callSid(coach.callId)}.json`;
      const bads: Record<string, string>[] = [
        { Coaching: 'true' },
        { Coaching: 'true', CallSidToCoach: callSid(coach.callId) },
        { Coaching: 'true', CallSidToCoach: 'CA' + '0'.repeat(32) },
        { Coaching: 'true', CallSidToCoach: 'not-a-sid' },
        { CallSidToCoach: callSid(agent.callId) },
        { Coaching: 'maybe' },
      ];
      for (const body of bads) {
        const res = await request(s.stack.api.app).post(path).auth(accountSid(s.f.customer.id), s.token).type('form').send(body);
        expect([res.status, res.body.code], JSON.stringify(body)).to.deep.equal([400, 20001]);
      }
      expect((await s.client.conferences(cf).participants(callSid(coach.callId)).fetch()).coaching).to.equal(false);

      const p = await s.client
        .conferences(cf)
        .participants(callSid(coach.callId))
        .update({ coaching: true, callSidToCoach: callSid(agent.callId) });
      expect([p.coaching, p.callSidToCoach]).to.deep.equal([true, callSid(agent.callId)]);
      await sleep(500);
      const [a, c] = await heard(agent, customer);
      expect(a, 'the agent hears the coach').to.be.greaterThan(15);
      expect(c, 'the customer does not').to.be.lessThan(5);

      const back = await s.client.conferences(cf).participants(callSid(coach.callId)).update({ coaching: false });
      expect([back.coaching, back.callSidToCoach]).to.deep.equal([false, null]);
      await sleep(500);
      expect(await heard(agent, customer), 'after: both hear the talker again').to.satisfy((v: number[]) => v.every((n) => n > 15));
      for (const x of [coach, agent, customer]) await s.stack.platform.app.calls.get(x.callId)?.hangup('normal');
      for (const x of [coach, agent, customer]) expect((await x.sipp).code).to.equal(0);
    });
  });
