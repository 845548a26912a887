// Issue 36: <Conference statusCallback statusCallbackEvent statusCallbackMethod>. The compiler's
// mapping and refusals; sipp callers (real SIP on loopback, a media-app node, real Postgres and Redis)
// in a room whose status callbacks reach the test's web app signed (checked with twilio.validateRequest),
// with Twilio's parameters, in the order things happened; on both media backends (the embedded engine,
// and fsmrf against our switch: the room is the switch's conference).
import { expect } from 'chai';
import twilio from 'twilio';
import { compileTwiml } from '../../../core/twiml/compile';
import { accountSid, callSid, toSid } from '../../../core/twilio/sids';
import { sleep } from '../../../testkit/media-app/harness';
import { newestRoom, participantsIn } from '../../../testkit/conference/rooms';
import { useTwimlCallers, type TwimlCallers } from '../../../testkit/twiml/stack';
import { shape, refused } from '../../../testkit/twiml/compile-checks';

const { VoiceResponse } = twilio.twiml;

describe('TwiML <Conference statusCallback>: compiler', () => {
  it('maps to conference_join status_callback (url resolved, method default POST, events default start end)', () => {
    const r = new VoiceResponse();
    r.dial().conference({ statusCallback: '/events' }, 'a');
    r.dial().conference({ statusCallback: 'https://cb.example.com/e', statusCallbackMethod: 'GET', statusCallbackEvent: ['join', 'leave', 'join'] }, 'b');
    expect(shape(compileTwiml(r.toString(), { documentUrl: 'https://app.example.com/voice' }))).to.deep.equal([
      { type: 'conference_join', option: { name: 'a', status_callback: { url: 'https://app.example.com/events', method: 'POST', events: ['start', 'end'] } } },
      { type: 'conference_join', option: { name: 'b', status_callback: { url: 'https://cb.example.com/e', method: 'GET', events: ['join', 'leave'] } } },
    ]);
  });

  it('bad input: 12200 for an event not sent here or unknown, a bad method, a URL that is not http(s)', () => {
    refused('<Response><Dial><Conference statusCallback="/e" statusCallbackEvent="start bogus">r</Conference></Dial></Response>', /bogus.*not an event/);
    refused('<Response><Dial><Conference statusCallback="/e" statusCallbackMethod="PUT">r</Conference></Dial></Response>', /statusCallbackMethod/);
    refused('<Response><Dial><Conference statusCallback="mailto:x@y">r</Conference></Dial></Response>', /statusCallback/);
  });
});

for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML <Conference statusCallback> with sipp callers (${backend} media backend)`, function () {
    this.timeout(180_000);
    let s: TwimlCallers;

    useTwimlCallers((x) => (s = x), undefined, { mediaServer: backend });

    const caller = (path: string) => s.caller(path);
    const roomNamed = (name: string) => newestRoom(s.f.customer.id, name);
    const joined = (conferenceId: string, n: number) => participantsIn(conferenceId, n);
    const callbacks = (path: string, n: number) => s.app.atLeast(path, n);

    it("join, start, leave and end reach the first participant's statusCallback, signed, in order, with Twilio's parameters", async () => {
      const first = new VoiceResponse();
      first.dial().conference({ statusCallback: '/conf-events', statusCallbackEvent: ['start', 'end', 'join', 'leave'], participantLabel: 'host' }, 'events room');
      s.app.on('/first', first.toString());
      s.app.on('/conf-events', '<Response/>');
      const second = new VoiceResponse();
      // a later participant's statusCallback does not replace the room's
      second.dial().conference({ statusCallback: '/other-events', endConferenceOnExit: true }, 'events room');
      s.app.on('/second', second.toString());
      s.app.on('/other-events', '<Response/>');
      const a = await caller('/first');
      const room = await roomNamed('events room');
      await joined(room.id, 1);
      const b = await caller('/second');
      await joined(room.id, 2);
      // B's join reaches the callback before A leaves, A's leave before B's
      await callbacks('/conf-events', 3);
      await s.hangup(a);
      await callbacks('/conf-events', 4);
      await s.hangup(b);
      const got = await callbacks('/conf-events', 6);
      // an absence: nothing more comes in the next second
      await sleep(1000);
      expect(s.app.requests.filter((r) => r.path === '/conf-events').length, 'no more than six').to.equal(6);
      expect(s.app.requests.filter((r) => r.path === '/other-events').length, 'the room keeps the first statusCallback').to.equal(0);
      expect(got.map((r) => [r.params.StatusCallbackEvent, r.params.CallSid ?? ''])).to.deep.equal([
        ['participant-join', callSid(a.callId)],
        ['conference-start', callSid(a.callId)],
        ['participant-join', callSid(b.callId)],
        ['participant-leave', callSid(a.callId)],
        ['participant-leave', callSid(b.callId)],
        ['conference-end', ''],
      ]);
      expect(got.map((r) => Number(r.params.SequenceNumber))).to.deep.equal([1, 2, 3, 4, 5, 6]);
      for (const r of got) {
        expect(r.signed, `${r.params.StatusCallbackEvent} signed`).to.equal(true);
        expect(r.method).to.equal('POST');
        expect(r.params).to.include({ ConferenceSid: toSid('CF', room.id), FriendlyName: 'events room', AccountSid: accountSid(s.f.customer.id) });
        expect(Date.parse(r.params.Timestamp!), 'an RFC 2822 Timestamp').to.be.greaterThan(Date.now() - 120_000);
      }
      expect(got[0]!.params).to.include({ Muted: 'false', Hold: 'false', Coaching: 'false', EndConferenceOnExit: 'false', StartConferenceOnEnter: 'true', ParticipantLabel: 'host' });
      expect(got[2]!.params).to.include({ EndConferenceOnExit: 'true' });
      expect(got[3]!.params).to.include({ ReasonParticipantLeft: 'participant_hung_up' });
      expect(got[5]!.params).to.include({ ReasonConferenceEnded: 'participant-with-end-conference-on-exit-left', CallSidEndingConference: callSid(b.callId) });
      for (const c of [a, b]) expect((await c.sipp).code).to.equal(0);
    });

    it('a waiter (startConferenceOnEnter="false") joins when the room starts: join, start, then its join with StartConferenceOnEnter=false; GET when asked', async () => {
      const waiter = new VoiceResponse();
      waiter.dial().conference({ startConferenceOnEnter: false, waitUrl: '', statusCallback: '/wait-events', statusCallbackMethod: 'GET', statusCallbackEvent: ['start', 'join'] }, 'events wait');
      s.app.on('/w', waiter.toString());
      s.app.on('/wait-events', '<Response/>');
      const starter = new VoiceResponse();
      starter.dial().conference('events wait');
      s.app.on('/s', starter.toString());
      const w = await caller('/w');
      const room = await roomNamed('events wait');
      await sleep(1500); // an absence: nothing while it waits
      expect(s.app.requests.filter((r) => r.path === '/wait-events').length, 'nothing while it waits').to.equal(0);
      const st = await caller('/s');
      await joined(room.id, 2);
      const got = await callbacks('/wait-events', 3);
      expect(got.map((r) => [r.params.StatusCallbackEvent, r.params.CallSid])).to.deep.equal([
        ['participant-join', callSid(st.callId)],
        ['conference-start', callSid(st.callId)],
        ['participant-join', callSid(w.callId)],
      ]);
      expect(got.every((r) => r.method === 'GET' && r.signed)).to.equal(true);
      expect(got[2]!.params).to.include({ StartConferenceOnEnter: 'false' });
      for (const c of [w, st]) await s.hangup(c);
      for (const c of [w, st]) expect((await c.sipp).code).to.equal(0);
    });
  });
