// Issue 36: <Conference coach="CA…">. The compiler's mapping and refusal; sipp callers (real SIP on
// loopback, a media-app node, real Postgres and Redis): the coach talks, the coached participant
// hears it and the other participant does not (both of them send no audio). On the fsmrf media backend
// (issue 55) coaching is refused by name (a whisper: only the embedded engine's mixer does it): the
// coach never enters the room, nobody hears it, its flow ends with the reason, and its endConferenceOnExit
// ends nothing (the room stays up for the two in it).
import { expect } from 'chai';
import twilio from 'twilio';
import { compileTwiml, TwimlError } from '../../core/twiml/compile';
import { testDb } from '../../testkit/db';
import { until } from '../../testkit/media-app/harness';
import { callSid } from '../../core/twilio/sids';
import { joinedRoom } from '../../testkit/conference/rooms';
import { useTwimlCallers, type TwimlCallers } from '../../testkit/twiml/stack';

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
    /** `coachEnds`: the coach's <Conference> has endConferenceOnExit="true". */
    async function room(name: string, coachEnds = false) {
      const plain = new VoiceResponse();
      plain.dial().conference(name);
      s.app.on('/member', plain.toString());
      const agent = await caller('/member', false);
      const customer = await caller('/member', false);
      await joined(name, 2);
      s.app.on('/coach', () => {
        const doc = new VoiceResponse();
        doc.dial().conference({ coach: callSid(agent.callId), statusCallback: '/ce', statusCallbackEvent: ['join', 'leave'], ...(coachEnds ? { endConferenceOnExit: true } : {}) }, name);
        return doc.toString();
      });
      s.app.on('/ce', '<Response/>');
      return { agent, customer };
    }

    if (backend === 'embedded')
      it('the coach is heard by the coached participant only', async () => {
        const { agent, customer } = await room('coached room');
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
        for (const c of [coach, agent, customer]) await s.hangup(c);
        for (const c of [coach, agent, customer]) expect((await c.sipp).code).to.equal(0);
      });
    else
      it('coaching is refused naming the backend: the coach never enters the room, nobody hears it, its flow ends with the reason; its endConferenceOnExit ends nothing', async () => {
        const { agent, customer } = await room('refused coach room', true);
        const [fromAgent, fromCustomer] = [agent.peer.levels.length, customer.peer.levels.length];
        const coach = await caller('/coach', true);
        const db = await testDb();
        const flow = await until(
          async () => {
            const af = (await db('activeflows').where({ reference_id: coach.callId }).first()) as { status: string; end_reason: string | null; error: string | null } | undefined;
            return af?.status === 'ended' ? af : null;
          },
          20_000,
          "the coach's flow ended",
        );
        expect(flow.error).to.match(/conference coaching .*is not available on the fsmrf media backend/);
        // the platform hangs the coach up; meanwhile the two in the room heard 100 packets each of nothing
        expect((await coach.sipp).code).to.equal(0);
        await Promise.all([agent.peer.packetsFrom(fromAgent), customer.peer.packetsFrom(fromCustomer)]);
        expect(agent.peer.voiced(fromAgent), 'the agent does not hear the coach').to.be.lessThan(5);
        expect(customer.peer.voiced(fromCustomer), 'the customer does not hear the coach').to.be.lessThan(5);
        expect(
          s.app.requests.filter((r) => r.path === '/ce'),
          'the coach never joined: no participant-join, no -leave',
        ).to.deep.equal([]);
        // the refused coach never joined: its endConferenceOnExit does not end the room for the two in it
        const row = (await db('conferences').where({ customer_id: s.f.customer.id, name: 'refused coach room' }).first()) as { id: string; status: string };
        expect(row.status, 'the room is still up').to.equal('progressing');
        const statuses = (await db('conferencecalls').where({ conference_id: row.id })).map((r: { status: string }) => r.status).sort();
        expect(statuses, 'the agent and the customer are still in it').to.deep.equal(['joined', 'joined', 'leaved']);
        for (const c of [agent, customer]) await s.hangup(c);
        for (const c of [agent, customer]) expect((await c.sipp).code).to.equal(0);
      });
  });
