// Issue 36: <Dial><Conference startConferenceOnEnter="false" waitUrl waitMethod>. The compiler's
// mapping and refusals (wait documents too); sipp callers (real SIP on loopback, a media-app node,
// real Postgres and Redis, RTP tone peers) who wait out of the mix, hearing silence, the node's
// music on hold or a wait document fetched (signed) in a loop, until a participant starts the room.
import { expect } from 'chai';
import twilio from 'twilio';
import { compileTwiml, TwimlError } from '../../../core/twiml/compile';
import { compileWaitDocument } from '../../../core/twiml/wait';
import { accountSid, callSid } from '../../../core/twilio/sids';
import { testDb } from '../../../testkit/db';
import { until } from '../../../testkit/media-app/harness';
import { newestRoom, participantsIn } from '../../../testkit/conference/rooms';
import type { PlacedCall } from '../../../testkit/streams/support';
import { useTwimlCallers, type TwimlCallers } from '../../../testkit/twiml/stack';
import { shape } from '../../../testkit/twiml/compile-checks';

const { VoiceResponse } = twilio.twiml;

function refused(run: () => unknown, words: RegExp): void {
  let err: unknown;
  try {
    run();
  } catch (e) {
    err = e;
  }
  expect(err).to.be.instanceOf(TwimlError);
  expect((err as TwimlError).code).to.equal(12200);
  expect((err as TwimlError).message).to.match(words);
}

/** Voiced packets in a 2 s window that mean "hears": well below the 100 sent, for a loaded machine. */
const HEARS = 15;

describe('TwiML <Conference startConferenceOnEnter="false">: compiler', () => {
  it('maps to conference_join start_on_enter false with its wait_url (absent, "" or resolved) and wait_method', () => {
    const r = new VoiceResponse();
    r.dial().conference({ startConferenceOnEnter: false }, 'a');
    r.dial().conference({ startConferenceOnEnter: false, waitUrl: '' }, 'b');
    r.dial().conference({ startConferenceOnEnter: false, waitUrl: '/wait', waitMethod: 'GET' }, 'c');
    r.dial().conference({ waitUrl: '/wait' }, 'd');
    expect(shape(compileTwiml(r.toString(), { documentUrl: 'https://app.example.com/voice' }))).to.deep.equal([
      { type: 'conference_join', option: { name: 'a', start_on_enter: false, wait_method: 'POST' } },
      { type: 'conference_join', option: { name: 'b', start_on_enter: false, wait_url: '', wait_method: 'POST' } },
      { type: 'conference_join', option: { name: 'c', start_on_enter: false, wait_url: 'https://app.example.com/wait', wait_method: 'GET' } },
      { type: 'conference_join', option: { name: 'd' } },
    ]);
  });

  it('bad input: 12200 for a bad waitMethod, a waitUrl that is not http(s), a verb a wait document may not hold', () => {
    refused(() => compileTwiml('<Response><Dial><Conference startConferenceOnEnter="false" waitMethod="PUT">r</Conference></Dial></Response>'), /waitMethod/);
    refused(() => compileTwiml('<Response><Dial><Conference startConferenceOnEnter="false" waitUrl="ftp://x/y">r</Conference></Dial></Response>'), /waitUrl/);
    refused(() => compileTwiml('<Response><Dial><Conference startConferenceOnEnter="no">r</Conference></Dial></Response>'), /startConferenceOnEnter/);
    refused(() => compileWaitDocument('<Response><Gather/></Response>', 'conference'), /Gather.*not allowed/);
    refused(() => compileWaitDocument('<Response><Leave/></Response>', 'conference'), /Leave.*not allowed/);
    refused(() => compileWaitDocument('<Response><Dial>123</Dial></Response>', 'queue'), /Dial.*not allowed/);
    refused(() => compileWaitDocument('<Response><Play digits="1"/></Response>', 'conference'), /Play/);
    const steps = compileWaitDocument('<Response><Say loop="2">hold on</Say><Pause length="3"/><Redirect method="GET">/next</Redirect></Response>', 'conference', { documentUrl: 'http://h/w' });
    expect(steps.map((st) => (st.kind === 'media' ? { type: st.action.type, option: st.action.option, times: st.times } : st))).to.deep.equal([
      { type: 'talk', option: { text: 'hold on', language: 'en-US' }, times: 2 },
      { type: 'sleep', option: { duration: 3000 }, times: 1 },
      { kind: 'redirect', url: 'http://h/next', method: 'GET' },
    ]);
    expect(compileWaitDocument('<Response><Play>/m.wav</Play><Leave/><Hangup/></Response>', 'queue', { documentUrl: 'http://h/w' }).map((st) => st.kind)).to.deep.equal(['media', 'leave', 'hangup']);
  });
});

for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML <Conference startConferenceOnEnter="false"> with sipp callers (${backend} media backend)`, function () {
    this.timeout(180_000);
    let s: TwimlCallers;

    useTwimlCallers((x) => (s = x), undefined, { mediaServer: backend });

    const caller = (path: string) => s.caller(path);
    const roomNamed = (name: string) => newestRoom(s.f.customer.id, name);
    const inState = (conferenceId: string, status: 'joining' | 'joined', n: number) => participantsIn(conferenceId, n, status);

    /**
     * Once what the peer hears has turned voiced (`on`) or quiet: the voiced packets among the next `n` it hears
     * (100: 2 s; a window of the media, not of the wall clock).
     */
    async function heard(c: PlacedCall, on: boolean, n = 100): Promise<number> {
      return c.peer.voiced(await c.peer.windowAfter(on, n));
    }

    it('waitUrl="": two waiters hear nothing (not each other) until a caller starts the room; then all three hear each other', async () => {
      const waiter = new VoiceResponse();
      waiter.dial().conference({ startConferenceOnEnter: false, waitUrl: '' }, 'quiet room');
      s.app.on('/quiet-waiter', waiter.toString());
      const starter = new VoiceResponse();
      starter.dial().conference('quiet room');
      s.app.on('/quiet-starter', starter.toString());
      const a = await caller('/quiet-waiter');
      const b = await caller('/quiet-waiter');
      const room = await roomNamed('quiet room');
      await inState(room.id, 'joining', 2);
      const [ha, hb] = await Promise.all([heard(a, false), heard(b, false)]);
      expect(ha, 'A hears neither B nor music').to.be.lessThan(5);
      expect(hb, 'B hears neither A nor music').to.be.lessThan(5);
      const db = await testDb();
      expect((await db('conferences').where({ id: room.id }).first())?.tm_start, 'not started').to.equal(null);
      const m = await caller('/quiet-starter');
      await inState(room.id, 'joined', 3);
      const [ha2, hb2, hm] = await Promise.all([heard(a, true), heard(b, true), heard(m, true)]);
      expect(ha2, 'A hears the room').to.be.greaterThan(HEARS);
      expect(hb2, 'B hears the room').to.be.greaterThan(HEARS);
      expect(hm, 'the starter hears the waiters').to.be.greaterThan(HEARS);
      for (const c of [a, b, m]) await s.hangup(c);
      for (const c of [a, b, m]) expect((await c.sipp).code).to.equal(0);
    });

    it('no waitUrl: the waiter hears the music on hold, alone; a caller who joins a started room does not wait', async () => {
      const waiter = new VoiceResponse();
      waiter.dial().conference({ startConferenceOnEnter: false }, 'music room');
      s.app.on('/music-waiter', waiter.toString());
      const starter = new VoiceResponse();
      starter.dial().conference({ endConferenceOnExit: true }, 'music room');
      s.app.on('/music-starter', starter.toString());
      const w = await caller('/music-waiter');
      const room = await roomNamed('music room');
      await inState(room.id, 'joining', 1);
      expect(await heard(w, true), 'the waiter hears the music on hold').to.be.greaterThan(HEARS);
      const m = await caller('/music-starter');
      await inState(room.id, 'joined', 2);
      const [hw, hm] = await Promise.all([heard(w, true), heard(m, true)]);
      expect(hw, 'the waiter now hears the starter').to.be.greaterThan(HEARS);
      expect(hm, 'the starter hears the waiter').to.be.greaterThan(HEARS);
      // the room has started: a late waiter goes straight in
      const late = await caller('/music-waiter');
      await inState(room.id, 'joined', 3);
      await s.hangup(m);
      const db = await testDb();
      await until(async () => ((await db('conferences').where({ id: room.id }).first())?.status === 'terminated' ? true : null), 10_000, 'ended with the starter');
      for (const c of [w, m, late]) expect((await c.sipp).code).to.equal(0);
    });

    it('waitUrl: the wait document is fetched signed, with the call parameters, and played in a loop until the room starts', async () => {
      const waiter = new VoiceResponse();
      waiter.dial().conference({ startConferenceOnEnter: false, waitUrl: '/wait-doc', waitMethod: 'POST' }, 'doc room');
      s.app.on('/doc-waiter', waiter.toString());
      const starter = new VoiceResponse();
      starter.dial().conference('doc room');
      s.app.on('/doc-starter', starter.toString());
      const wait = new VoiceResponse();
      wait.say('Please wait for the host.');
      wait.pause({ length: 1 });
      s.app.on('/wait-doc', wait.toString());
      const w = await caller('/doc-waiter');
      const first = await s.app.next('/wait-doc');
      expect(first.signed, 'signed').to.equal(true);
      expect(first.method).to.equal('POST');
      expect(first.params).to.include({ CallSid: callSid(w.callId), AccountSid: accountSid(s.f.customer.id) });
      await s.app.next('/wait-doc', 30_000);
      const sayFrom = w.peer.levels.length;
      await w.peer.packetsFrom(sayFrom, 150);
      expect(w.peer.voiced(sayFrom), 'the waiter hears the Say').to.be.greaterThan(5);
      const room = await roomNamed('doc room');
      const m = await caller('/doc-starter');
      await inState(room.id, 'joined', 2);
      const fetched = s.app.requests.filter((r) => r.path === '/wait-doc').length;
      const [hw, hm] = await Promise.all([heard(w, true, 150), heard(m, true, 150)]);
      expect(hw, 'the waiter hears the starter').to.be.greaterThan(HEARS);
      expect(hm, 'the starter hears the waiter').to.be.greaterThan(HEARS);
      expect(s.app.requests.filter((r) => r.path === '/wait-doc').length, 'no wait document once started').to.equal(fetched);
      for (const c of [w, m]) await s.hangup(c);
      for (const c of [w, m]) expect((await c.sipp).code).to.equal(0);
    });
  });
