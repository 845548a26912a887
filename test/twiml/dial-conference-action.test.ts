// Issue 54, item 6: <Dial action> around <Conference> was refused with 12200; Twilio fetches the
// action when the caller leaves the room with its call still up. The compiler's mapping, then sipp
// callers on a media-app node: a room ended by its moderator sends the others to their action
// (DialCallStatus=completed, signed), a full room sends the late caller there with failed.
import { expect } from 'chai';
import twilio from 'twilio';
import { compileTwiml } from '../../core/twiml/compile';
import { TWIML_VARS } from '../../core/twiml/program';
import { callSid } from '../../core/twilio/sids';
import { testDb } from '../../testkit/db';
import { until } from '../../testkit/media-app/harness';
import type { TwimlServer } from '../../testkit/twiml/server';
import { useTwimlCallers, type TwimlCallers } from '../../testkit/twiml/stack';
import type { Fixture } from '../../testkit/api';
import { shape } from '../../testkit/twiml/compile-checks';

const { VoiceResponse } = twilio.twiml;

describe('TwiML <Dial action> around <Conference>: compiler', () => {
  it('joins the room, then sets DialCallStatus from the join and fetches the action', () => {
    const r = new VoiceResponse();
    r.dial({ action: '/after', method: 'GET' }).conference('room');
    expect(shape(compileTwiml(r.toString(), { documentUrl: 'https://app.example.com/voice' }))).to.deep.equal([
      { type: 'conference_join', option: { name: 'room' } },
      { type: 'variable_set', option: { key: `${TWIML_VARS.paramPrefix}DialCallStatus`, value: '${svc.conference.status}' } },
      { type: 'twiml', option: { url: 'https://app.example.com/after', method: 'GET' } },
    ]);
  });
});

for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML <Dial action> around <Conference> with sipp callers (${backend} media backend)`, function () {
    this.timeout(120_000);
    let app: TwimlServer;
    let f: Fixture;
    let caller: TwimlCallers['caller'];
    let hangup: TwimlCallers['hangup'];

    useTwimlCallers((s) => ({ app, f, caller, hangup } = s), undefined, { mediaServer: backend });

    async function joined(name: string, n: number): Promise<void> {
      const db = await testDb();
      await until(
        async () => {
          const room = await db('conferences').where({ customer_id: f.customer.id, name }).orderBy('tm_create', 'desc').first();
          if (!room) return null;
          return (await db('conferencecalls').where({ conference_id: room.id, status: 'joined' })).length === n ? true : null;
        },
        20_000,
        `${n} joined ${name}`,
      );
    }

    it('the room ended by its moderator: the caller still up gets the action with DialCallStatus=completed', async () => {
      const member = new VoiceResponse();
      member.dial({ action: '/member-after' }).conference('ended room');
      member.say('not reached');
      app.on('/member', member.toString());
      const host = new VoiceResponse();
      host.dial().conference({ endConferenceOnExit: true }, 'ended room');
      app.on('/host', host.toString());
      const bye = new VoiceResponse();
      bye.hangup();
      app.on('/member-after', bye.toString());
      const m = await caller('/member');
      const h = await caller('/host');
      await joined('ended room', 2);
      await hangup(h);
      const after = await app.next('/member-after', 20_000);
      expect(after.signed, 'signed').to.equal(true);
      expect(after.method).to.equal('POST');
      expect(after.params).to.include({ CallSid: callSid(m.callId), DialCallStatus: 'completed' });
      for (const c of [m, h]) expect((await c.sipp).code).to.equal(0);
      expect(app.requests.filter((r) => r.path === '/member-after')).to.have.length(1);
    });

    it('a full room: the late caller gets the action with DialCallStatus=failed', async () => {
      const join = new VoiceResponse();
      join.dial({ action: '/full-after' }).conference({ maxParticipants: 2 }, 'small room');
      app.on('/small', join.toString());
      // the action's document keeps the late caller a moment (placeCall waits to see its call up)
      const later = new VoiceResponse();
      later.pause({ length: 3 });
      later.hangup();
      app.on('/full-after', later.toString());
      const a = await caller('/small');
      await joined('small room', 1);
      const b = await caller('/small');
      await joined('small room', 2);
      const c = await caller('/small');
      const after = await app.next('/full-after', 20_000);
      expect(after.params).to.include({ CallSid: callSid(c.callId), DialCallStatus: 'failed' });
      expect((await c.sipp).code).to.equal(0);
      for (const x of [a, b]) await hangup(x);
      for (const x of [a, b]) expect((await x.sipp).code).to.equal(0);
    });
  });
