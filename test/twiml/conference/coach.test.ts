// Issue 36: <Conference coach="CA…">. The compiler's mapping and refusal; sipp callers (real SIP on
// loopback, a media-app node, real Postgres and Redis): the coach talks, the coached participant
// hears it and the other participant does not (both of them send no audio), nor one who joins after the
// coach. On both media backends: the engine's mixer (a whisper) and the switch's room (fsmrf, issue 55:
// mod_conference's relate nospeak toward every member but the coached one).
import { expect } from 'chai';
import twilio from 'twilio';
import { compileTwiml, TwimlError } from '../../../core/twiml/compile';
import { callSid } from '../../../core/twilio/sids';
import { joinedRoom } from '../../../testkit/conference/rooms';
import { useTwimlCallers, type TwimlCallers } from '../../../testkit/twiml/stack';

const { VoiceResponse } = twilio.twiml;

describe('TwiML <Conference coach>: compiler', () => {
  it('a CallSid maps to conference_join coach_call_id; anything else is a 12200', () => {
    const r = new VoiceResponse();
    r.dial().conference({ coach: 'CA0123456789abcdef0123456789abcdef' }, 'r');
    expect(compileTwiml(r.toString())[0]!.option).to.deep.equal({ name: 'r', coach_call_id: '01234567-89ab-cdef-0123-456789abcdef' });
    let err: unknown;
    try {
      compileTwiml('<Response><Dial><Conference coach="agent-7">r</Conference></Dial></Response>');
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(TwimlError);
    expect((err as TwimlError).code).to.equal(12200);
    expect((err as TwimlError).message).to.match(/coach/);
  });
});

for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML <Conference coach> with sipp callers (${backend} media backend)`, function () {
    this.timeout(180_000);
    let s: TwimlCallers;

    useTwimlCallers((x) => (s = x), undefined, { mediaServer: backend });

    const caller = (path: string, talk: boolean) => s.caller(path, { talk });
    const joined = async (name: string, n: number) => void (await joinedRoom(s.f.customer.id, name, n));

    /** The agent and the customer, silent, in `name`; the coach's document (a statusCallback for its join and leave) coaches the agent. */
    async function room(name: string) {
      const plain = new VoiceResponse();
      plain.dial().conference(name);
      s.app.on('/member', plain.toString());
      const agent = await caller('/member', false);
      const customer = await caller('/member', false);
      await joined(name, 2);
      s.app.on('/coach', () => {
        const doc = new VoiceResponse();
        // no beep at its join: what the others hear from then on is the coach's audio or nothing
        doc.dial().conference({ coach: callSid(agent.callId), beep: 'false', statusCallback: '/ce', statusCallbackEvent: ['join', 'leave'] }, name);
        return doc.toString();
      });
      s.app.on('/ce', '<Response/>');
      return { agent, customer };
    }

    it('the coach is heard by the coached participant only, nor by one who joins after it', async () => {
      const { agent, customer } = await room('coached room');
      // the beeps of the two joins are over (50 packets: 1 s): from here the customer hears nothing voiced
      await customer.peer.packetsFrom(customer.peer.levels.length, 50);
      const beforeCoach = customer.peer.levels.length;
      const coach = await caller('/coach', true);
      await joined('coached room', 3);
      // once the agent hears the coach (the coach is in the mix), a window of 100 packets each hears
      // (the customer's 100: it gets RTP)
      await agent.peer.turned(true);
      const fromAgent = agent.peer.levels.length;
      const fromCustomer = customer.peer.levels.length;
      await Promise.all([agent.peer.packetsFrom(fromAgent), customer.peer.packetsFrom(fromCustomer)]);
      expect(agent.peer.voiced(fromAgent), 'the agent hears the coach').to.be.greaterThan(15);
      expect(customer.peer.voiced(fromCustomer), 'the customer does not hear the coach').to.be.lessThan(5);
      // not even as the coach enters: it joins unheard by the room, is related to the agent, then speaks
      expect(customer.peer.voiced(beforeCoach), 'the customer hears no voiced frame from the coach joining on').to.equal(0);
      // a participant who joins after the coach does not hear it either (on the switch: the coach's
      // relate nospeak is made again for it at its add-member), and the agent still does
      const late = await caller('/member', false);
      await joined('coached room', 4);
      const [fromLate, agentLater] = [late.peer.levels.length, agent.peer.levels.length];
      await Promise.all([late.peer.packetsFrom(fromLate), agent.peer.packetsFrom(agentLater)]);
      expect(late.peer.voiced(fromLate), 'the later participant does not hear the coach').to.be.lessThan(5);
      expect(agent.peer.voiced(agentLater), 'the agent still hears the coach').to.be.greaterThan(15);
      for (const c of [coach, agent, customer, late]) await s.hangup(c);
      for (const c of [coach, agent, customer, late]) expect((await c.sipp).code).to.equal(0);
    });
  });
