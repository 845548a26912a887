// Issue 36: <Conference beep="true|false|onEnter|onExit">. The compiler's mapping; sipp callers
// (real SIP on loopback, a media-app node, real Postgres and Redis) who send no audio, so the only
// thing a listener hears in the room is the beep played into it when a participant joins or leaves. On
// both media backends: the engine's mixer (a fork injecting the tone), the switch's room (fsmrf, issue
// 55: `conference <room> play tone_stream://…`).
import { expect } from 'chai';
import twilio from 'twilio';
import { compileTwiml } from '../../../core/twiml/compile';
import { joinedRoom } from '../../../testkit/conference/rooms';
import { until } from '../../../testkit/media-app/harness';
import type { PlacedCall } from '../../../testkit/streams/support';
import { useTwimlCallers, type TwimlCallers } from '../../../testkit/twiml/stack';
import { shape } from '../../../testkit/twiml/compile-checks';

const { VoiceResponse } = twilio.twiml;

describe('TwiML <Conference beep>: compiler', () => {
  it('true, onEnter, onExit map to conference_join beep; false and absent to none', () => {
    const r = new VoiceResponse();
    for (const beep of ['true', 'onEnter', 'onExit', 'false'] as const) r.dial().conference({ beep }, 'r');
    r.dial().conference('r');
    expect(shape(compileTwiml(r.toString()))).to.deep.equal([
      { type: 'conference_join', option: { name: 'r', beep: 'true' } },
      { type: 'conference_join', option: { name: 'r', beep: 'onEnter' } },
      { type: 'conference_join', option: { name: 'r', beep: 'onExit' } },
      { type: 'conference_join', option: { name: 'r' } },
      { type: 'conference_join', option: { name: 'r' } },
    ]);
  });
});

for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML <Conference beep> with sipp callers (${backend} media backend)`, function () {
    this.timeout(180_000);
    let s: TwimlCallers;

    useTwimlCallers((x) => (s = x), undefined, { mediaServer: backend });

    // silent peers: what a listener hears is the room's own audio only
    const caller = (path: string) => s.caller(path, { talk: false });
    const joined = async (name: string, n: number) => void (await joinedRoom(s.f.customer.id, name, n));

    /**
     * Voiced packets the listener hears from before `act` until, with `beep`, the beep has come (5 voiced
     * since then, perhaps before the row said joined) and gone (10 quiet packets); without, 125 packets (2.5 s
     * of the room) after `act`: the window bounded by the media the listener receives, not the wall clock.
     */
    async function heardAfter(listener: PlacedCall, act: () => Promise<unknown>, beep: boolean): Promise<number> {
      const from = listener.peer.levels.length;
      await act();
      if (beep) {
        await until(() => listener.peer.voiced(from) >= 5, 10_000, 'the beep');
        await listener.peer.turned(false);
      } else await listener.peer.packetsFrom(listener.peer.levels.length, 125);
      return listener.peer.voiced(from);
    }

    it('beep="onEnter" is heard by the room when that caller joins, not when it leaves; beep="onExit" the other way; none without beep', async () => {
      const plain = new VoiceResponse();
      plain.dial().conference('beep room');
      s.app.on('/plain', plain.toString());
      const enter = new VoiceResponse();
      enter.dial().conference({ beep: 'onEnter' }, 'beep room');
      s.app.on('/enter', enter.toString());
      const exit = new VoiceResponse();
      exit.dial().conference({ beep: 'onExit' }, 'beep room');
      s.app.on('/exit', exit.toString());
      const listener = await caller('/plain');
      await joined('beep room', 1);
      await listener.peer.turned(false, 10_000); // the room's quiet reaches the listener
      let quiet!: PlacedCall;
      expect(await heardAfter(listener, async () => ((quiet = await caller('/plain')), joined('beep room', 2)), false), 'no beep without the attribute').to.be.lessThan(3);
      let e!: PlacedCall;
      expect(await heardAfter(listener, async () => ((e = await caller('/enter')), joined('beep room', 3)), true), 'the onEnter beep on joining').to.be.within(5, 40);
      expect(await heardAfter(listener, async () => (await s.hangup(e), joined('beep room', 2)), false), 'no beep when the onEnter caller leaves').to.be.lessThan(3);
      let x!: PlacedCall;
      expect(await heardAfter(listener, async () => ((x = await caller('/exit')), joined('beep room', 3)), false), 'no beep when the onExit caller joins').to.be.lessThan(3);
      expect(await heardAfter(listener, async () => (await s.hangup(x), joined('beep room', 2)), true), 'the onExit beep on leaving').to.be.within(5, 40);
      for (const c of [quiet, listener]) await s.hangup(c);
      for (const c of [listener, quiet, e, x]) expect((await c.sipp).code).to.equal(0);
    });
  });
