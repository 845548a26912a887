// Issue 36: <Conference statusCallbackEvent="speaker">. Two sipp callers (real SIP on loopback, a
// media-app node, real Postgres and Redis) in one room, each sending RTP all along: one talks (a
// 700 Hz tone at about -15 dBFS) for 1.5 s and is quiet again (RTP of silence), the other sends
// silence only. The room's statusCallback gets participant-speech-start and participant-speech-stop
// for the talker only, at sane times (start within a second of the talk, stop after the 600 ms of
// quiet the detector waits for), signed (twilio.validateRequest), in order with join and leave.
import { expect } from 'chai';
import twilio from 'twilio';
import { compileTwiml } from '../../../core/twiml/compile';
import { callSid } from '../../../core/twilio/sids';
import { sleep, until } from '../../../testkit/media-app/harness';
import type { PlacedCall } from '../../../testkit/streams/support';
import type { TwimlRequest } from '../../../testkit/twiml/server';
import { useTwimlCallers, type TwimlCallers } from '../../../testkit/twiml/stack';

const { VoiceResponse } = twilio.twiml;

describe('TwiML <Conference statusCallbackEvent="speaker">: compiler', () => {
  it('speaker is an event now', () => {
    const r = new VoiceResponse();
    r.dial().conference({ statusCallback: 'https://cb.example.com/e', statusCallbackEvent: ['speaker', 'join'] }, 'r');
    expect(compileTwiml(r.toString())[0]!.option).to.deep.include({ status_callback: { url: 'https://cb.example.com/e', method: 'POST', events: ['speaker', 'join'] } });
  });
});

for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML <Conference statusCallbackEvent="speaker"> with a talking and a silent sipp caller (${backend} media backend)`, function () {
    this.timeout(180_000);
    let s: TwimlCallers;

    useTwimlCallers((x) => (s = x), undefined, { mediaServer: backend });

    /** A caller into the room, sending RTP of silence from the start. */
    async function caller(path: string): Promise<PlacedCall> {
      const c = await s.caller(path, { talk: false });
      c.peer.amplitude = 0;
      c.peer.talk(c.live.endpoint!.local.port);
      return c;
    }

    it('participant-speech-start and -stop for the talker only, at sane times, between join and leave', async () => {
      const doc = new VoiceResponse();
      doc.dial().conference({ statusCallback: '/sp', statusCallbackEvent: ['join', 'leave', 'speaker'] }, 'speaker room');
      s.app.on('/s', doc.toString());
      s.app.on('/sp', '<Response/>');
      const talker = await caller('/s');
      const silent = await caller('/s');
      const events = (): TwimlRequest[] => s.app.requests.filter((x) => x.path === '/sp');
      await until(() => (events().filter((r) => r.params.StatusCallbackEvent === 'participant-join').length === 2 ? true : null), 30_000, 'two joins');
      // both in the mix and sending silence: no speech event (an absence)
      await sleep(1500);
      expect(
        events().filter((r) => /speech/.test(r.params.StatusCallbackEvent ?? '')),
        'none while silent',
      ).to.deep.equal([]);

      const talkAt = performance.now();
      talker.peer.amplitude = 8000;
      // it talks until its speech is reported
      await until(() => events().find((r) => r.params.StatusCallbackEvent === 'participant-speech-start') ?? null, 10_000, 'speech-start');
      const quietAt = performance.now();
      talker.peer.amplitude = 0;
      const stop = await until(() => events().find((r) => r.params.StatusCallbackEvent === 'participant-speech-stop') ?? null, 10_000, 'speech-stop');
      const start = events().find((r) => r.params.StatusCallbackEvent === 'participant-speech-start')!;
      expect(start, 'speech-start').to.not.equal(undefined);
      // start: 60 ms of level, plus the RTP, the mixer's tick and the HTTP request
      expect(start.at - talkAt, 'speech-start after the talk began').to.be.within(40, 1000);
      // stop: 600 ms of quiet, plus the same
      expect(stop.at - quietAt, 'speech-stop after the quiet began').to.be.within(550, 2000);

      await sleep(1000); // an absence: no other speech event after the stop
      await s.stack.platform.app.calls.get(talker.callId)?.hangup('normal');
      await s.stack.platform.app.calls.get(silent.callId)?.hangup('normal');
      const got = await until(() => (events().filter((r) => r.params.StatusCallbackEvent === 'participant-leave').length === 2 ? events() : null), 20_000, 'two leaves');
      await sleep(500); // an absence: nothing after the leaves
      const seen = events().map((r) => [r.params.StatusCallbackEvent, r.params.CallSid]);
      expect(seen.slice(0, 2)).to.have.deep.members([
        ['participant-join', callSid(talker.callId)],
        ['participant-join', callSid(silent.callId)],
      ]);
      expect(seen.slice(2, 4)).to.deep.equal([
        ['participant-speech-start', callSid(talker.callId)],
        ['participant-speech-stop', callSid(talker.callId)],
      ]);
      expect(seen.slice(4).map((e) => e[0])).to.deep.equal(['participant-leave', 'participant-leave']);
      expect(got.map((r) => Number(r.params.SequenceNumber))).to.deep.equal([1, 2, 3, 4, 5, 6]);
      for (const r of got) expect(r.signed, `${r.params.StatusCallbackEvent} signed`).to.equal(true);
      expect(start.params).to.include({ Muted: 'false', Hold: 'false', FriendlyName: 'speaker room' });
    });
  });
