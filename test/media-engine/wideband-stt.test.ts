// Speech recognition at the leg's rate (issue #34): transcription of a G.722 leg gets 16 kHz. The
// far end (far-end.ts) sends a 1 kHz + 6 kHz tone over real UDP; the endpoint transcribes with the
// Deepgram adapter against the local protocol server (testkit/speech/deepgram-server.ts), which
// checks the rate it is told against the bytes a second it gets. Only a 16 kHz path carries 6 kHz.
// A G.711 leg still streams 8 kHz; a plain fork (media streams, Twilio) stays 8 kHz on a G.722 leg.
import { expect } from 'chai';
import type { MediaServer } from '../../media-engine';
import { FakeDeepgram, type DgSession } from '../../testkit/speech/deepgram-server';
import { sleep, useMediaServer } from '../../testkit/media-engine/support';
import { power, ToneFarEnd, toneShare, type FarCodec } from '../../testkit/media-engine/far-end';

const KEY = 'dg-wide-key';

/** The last `seconds` of a session's audio as samples. */
function lastAudio(s: DgSession, seconds: number, rate: number): Int16Array {
  const all = Buffer.concat(s.audio);
  const x = new Int16Array(all.buffer, all.byteOffset, all.length >> 1);
  return x.subarray(Math.max(0, x.length - seconds * rate));
}

describe('media-engine: transcription at the leg rate (16 kHz on a wideband leg)', function () {
  this.timeout(30000);
  let ms: MediaServer;
  let dg: FakeDeepgram;
  const fars: ToneFarEnd[] = [];

  useMediaServer({ ports: 60, workers: 1 }, (f) => ({ ms } = f));
  before(async () => {
    dg = await new FakeDeepgram(KEY).listen();
    process.env.DEEPGRAM_API_KEY = KEY;
    process.env.DEEPGRAM_URL = dg.url;
    process.env.EGRESS_ALLOW_CIDRS = '127.0.0.0/8'; // the recogniser goes through the egress policy; the stand-in is on loopback
  });
  after(async () => {
    delete process.env.DEEPGRAM_API_KEY;
    delete process.env.DEEPGRAM_URL;
    delete process.env.EGRESS_ALLOW_CIDRS;
    for (const f of fars) f.close();
    await dg?.close();
  });

  /** A leg whose far end runs `codec`, transcribed with Deepgram while the far end sends 2.5 s of tones. */
  async function transcribe(codec: FarCodec): Promise<DgSession> {
    const far = await new ToneFarEnd(codec).open();
    fars.push(far);
    const ep = await ms.createEndpoint({ remoteSdp: far.offer });
    far.sendTo(ep.local.port);
    const before = dg.sessions.length;
    await ep.transcribeStart({ provider: 'deepgram', direction: 'in' });
    await far.sendTones(2.5, [
      [1000, 6000],
      [6000, 6000],
    ]);
    await ep.transcribeStop();
    await ep.destroy();
    expect(dg.sessions.length).to.equal(before + 1);
    return dg.sessions[before]!;
  }

  it('a G.722 leg: the recogniser is told sample_rate=16000, gets 32,000 bytes/s and the 6 kHz tone', async () => {
    const s = await transcribe('G722');
    expect(s.query.get('sample_rate')).to.equal('16000');
    expect(s.rateError, 'the bytes match the rate').to.equal(null);
    expect(s.byteRate).to.be.within(32000 * 0.85, 32000 * 1.15);
    const x = lastAudio(s, 1, 16000);
    expect(power(x), 'it hears the far end').to.be.greaterThan(1e6);
    expect(toneShare(x, 6000, 16000), 'the 6 kHz tone (only a 16 kHz path carries it)').to.be.greaterThan(0.3);
    expect(toneShare(x, 1000, 16000), 'the 1 kHz tone').to.be.greaterThan(0.3);
  });

  it('a G.711 leg: sample_rate=8000 and 16,000 bytes/s, as before', async () => {
    const s = await transcribe('PCMU');
    expect(s.query.get('sample_rate')).to.equal('8000');
    expect(s.rateError).to.equal(null);
    expect(s.byteRate).to.be.within(16000 * 0.85, 16000 * 1.15);
    const x = lastAudio(s, 1, 8000);
    expect(toneShare(x, 1000, 8000), 'the 1 kHz tone').to.be.greaterThan(0.3);
  });

  it('a plain fork of a G.722 leg (media streams, Twilio streams) stays 8 kHz; asked for the leg rate it is 16 kHz', async () => {
    const far = await new ToneFarEnd('G722').open();
    fars.push(far);
    const ep = await ms.createEndpoint({ remoteSdp: far.offer });
    far.sendTo(ep.local.port);
    const narrow: number[] = [];
    const wide: number[] = [];
    const f8 = await ep.forkAudioStart({ mix: 'in', onFrame: (f) => void narrow.push(f.length) });
    const f16 = await ep.forkAudioStart({ mix: 'both', legRate: true, onFrame: (f) => void wide.push(f.length) });
    expect(f8.rate).to.equal(8000);
    expect(f16.rate).to.equal(16000);
    await far.sendTones(0.5, [[1000, 6000]]);
    await sleep(100);
    await ep.forkAudioStop();
    await ep.destroy();
    expect(narrow.length).to.be.greaterThan(15);
    expect(wide.length).to.be.greaterThan(15);
    expect(new Set(narrow)).to.deep.equal(new Set([160]));
    expect(new Set(wide)).to.deep.equal(new Set([320]));
  });
});
