// avmd_start / avmd_stop (mod_avmd) through drachtio-fsmrf's public API (execute, addCustomEventListener)
// against our switch: the far end, an engine endpoint sending real RTP, plays a voicemail beep (1000 Hz,
// 500 ms) and fsmrf gets avmd::beep; ringback and speech get none. The engine's beep detector decides.
import { expect } from 'chai';
import { getEventListeners } from 'node:events';
import path from 'node:path';
import type { Endpoint as FsEndpoint } from 'drachtio-fsmrf';
import type { Endpoint } from '../../media-engine';
import { avmdStart, avmdStop, badAvmdOption } from '../../esl/apps/avmd';
import type { AppContext } from '../../esl/apps/context';
import { Channel } from '../../esl/channel';
import { speechWav } from '../../testkit/media-engine/support';
import { useFsmrfRig } from '../../testkit/esl/switch-rig';

interface EslEvt {
  getHeader(name: string): string | null;
}

describe('esl: avmd_start / avmd_stop through fsmrf (mod_avmd on the engine beep detector)', () => {
  const fx = useFsmrfRig();
  let dir: string;
  before(() => ({ dir } = fx));

  /** A channel whose far end sends to it, with the avmd events fsmrf hands the Endpoint collected. */
  async function call(): Promise<{ ep: FsEndpoint; peer: Endpoint; events: { name: string; evt: EslEvt }[]; beep: Promise<EslEvt> }> {
    const { ep, peer } = await fx.call();
    const events: { name: string; evt: EslEvt }[] = [];
    let onBeep: (e: EslEvt) => void = () => undefined;
    const beep = new Promise<EslEvt>((resolve) => (onBeep = resolve));
    for (const name of ['avmd::start', 'avmd::beep', 'avmd::stop'])
      ep.addCustomEventListener(name, (_body: unknown, evt: EslEvt) => {
        events.push({ name, evt });
        if (name === 'avmd::beep') onBeep(evt);
      });
    return { ep, peer, events, beep };
  }

  it('a 1000 Hz beep: avmd::start, avmd::beep with its frequency, avmd::stop DETECTED, avmd_detect=TRUE', async () => {
    const { ep, peer, events, beep } = await call();
    const started = (await ep.execute('avmd_start')) as EslEvt;
    expect(started.getHeader('Application-Response')).to.equal('_none_');
    await peer.play('silence_stream://300');
    await peer.play('tone_stream://%(500,0,1000)');
    let timer: NodeJS.Timeout | undefined;
    const hit = await Promise.race([beep, new Promise<null>((r) => (timer = setTimeout(() => r(null), 5000)))]).finally(() => clearTimeout(timer));
    expect(hit, 'avmd::beep within 5 s').to.not.equal(null);
    expect(hit!.getHeader('Beep-Status')).to.equal('DETECTED');
    expect(hit!.getHeader('Unique-ID')).to.equal(ep.uuid);
    expect(Number(hit!.getHeader('Frequency'))).to.be.closeTo(1000, 20);
    const stopped = (await ep.execute('avmd_stop')) as EslEvt;
    expect(stopped.getHeader('variable_avmd_detect')).to.equal('TRUE');
    expect(events.map((e) => e.name)).to.deep.equal(['avmd::start', 'avmd::beep', 'avmd::stop']);
    expect(events[2]!.evt.getHeader('Beep-Status')).to.equal('DETECTED');
  });

  it('ringback and speech, no beep: no avmd::beep; avmd::stop NOTDETECTED; a second stop does nothing', async () => {
    const { ep, peer, events } = await call();
    const speech = path.join(dir, 'speech.wav');
    speechWav(speech, 'please leave a message after the tone');
    await ep.execute('avmd_start');
    await peer.play('tone_stream://%(1000,0,440,480)');
    await peer.play(speech);
    // the last of it has reached the detector once this short silence has been played after it
    await peer.play('silence_stream://200');
    const stopped = (await ep.execute('avmd_stop')) as EslEvt;
    expect(stopped.getHeader('variable_avmd_detect'), 'absent').to.equal(null);
    expect(events.map((e) => e.name)).to.deep.equal(['avmd::start', 'avmd::stop']);
    expect(events[1]!.evt.getHeader('Beep-Status')).to.equal('NOTDETECTED');
    const again = (await ep.execute('avmd_stop')) as EslEvt;
    expect(again.getHeader('Application-Response')).to.match(/^-ERR/);
    expect(events).to.have.length(2);
  });

  it("avmd_start / avmd_stop again and again leave no listener on the channel's hang-up signal", async () => {
    const ep = await fx.rig.engine.createEndpoint({});
    try {
      const hangup = new AbortController();
      const fired: string[] = [];
      const failures: Error[] = [];
      const sip = { callId: 'c-1', userAgent: '', fromUser: 'a', toUser: 'b', remoteSdp: null, eslOutbound: '127.0.0.1:1' };
      const ctx: AppContext = {
        channel: new Channel(ep, sip, 'drachtio_mrf'),
        fire: (_name, _own, opts) => fired.push(opts?.subclass ?? ''),
        signal: hangup.signal,
        failed: (e) => failures.push(e),
      };
      for (let i = 0; i < 3; i++) {
        expect(await avmdStart(ctx, '')).to.equal('_none_');
        expect(await avmdStop(ctx)).to.equal('_none_');
      }
      expect(getEventListeners(hangup.signal, 'abort')).to.have.length(0);
      expect(fired).to.deep.equal(Array(3).fill(['avmd::start', 'avmd::stop']).flat());
      expect(failures).to.deep.equal([]);
    } finally {
      await ep.destroy();
    }
  });

  it('the engine refusing the detection: reported, and avmd::stop says so rather than NOTDETECTED', async () => {
    const { ep, events } = await call();
    const reported = new Promise<Error>((resolve) => fx.rig.esl.once('failed', resolve));
    // a wait of its own holds the channel's beep detector: the engine refuses a second one (EBUSY)
    const engineEp = fx.rig.esl.channels.get(ep.uuid)!.channel.endpoint;
    const holder = engineEp.waitForBeep({ timeoutMs: 60_000 }).catch((e: { code?: string }) => e.code);
    await ep.execute('avmd_start');
    let timer: NodeJS.Timeout | undefined;
    const err = await Promise.race([reported, new Promise<null>((r) => (timer = setTimeout(() => r(null), 5000)))]).finally(() => clearTimeout(timer));
    expect(err, 'a failure reported within 5 s').to.be.instanceOf(Error);
    expect((err as Error & { code?: string }).code).to.equal('EBUSY');
    const stopped = (await ep.execute('avmd_stop')) as EslEvt;
    expect(stopped.getHeader('Application-Response')).to.match(/^-ERR beep detection failed: /);
    expect(events.map((e) => e.name)).to.deep.equal(['avmd::start', 'avmd::stop']);
    expect(events[1]!.evt.getHeader('Stop-status')).to.match(/^ERROR \(beep detection failed: /);
    // avmd_stop did not cancel the wait it does not own
    await engineEp.stopAmd();
    expect(await holder).to.equal('ECANCELED');
  });

  it("avmd_start's options: mod_avmd's names as option=value, comma separated", () => {
    expect(badAvmdOption('')).to.equal(null);
    expect(badAvmdOption('inbound_channel=1,outbound_channel=0,debug=0')).to.equal(null);
    expect(badAvmdOption('loudness=3')).to.match(/not found/);
    expect(badAvmdOption('debug')).to.match(/option=value/);
  });

  it('bad options: avmd_start answers -ERR in Application-Response and detects nothing; the channel stays', async () => {
    const { ep, events } = await call();
    const r = (await ep.execute('avmd_start', 'loudness=3')) as EslEvt;
    expect(r.getHeader('Application-Response')).to.match(/^-ERR .*loudness/);
    expect(events).to.deep.equal([]);
    expect(await ep.play('silence_stream://100')).to.have.property('playbackMilliseconds', '100');
  });
});
