// A wideband leg sending 8 kHz audio (bridged to a G.711 leg) codes it as such (issue #34, half the work of
// a transcoded pair): G.722 from the 8 kHz frame itself (the upper band of every code word empty, no
// resampling to 16 kHz), Opus by an encoder at 8 kHz (narrow band). When something reads the leg's 16 kHz frame (a recording),
// the frame is brought up to 16 kHz again; the far ends hear each other's tones throughout.
import { expect } from 'chai';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { MediaServer } from '../../media-engine';
import { createCodec } from '../../media-engine/codecs';
import { offer } from '../../scripts/bench/media/codec-legs';
import { toneShare, useToneLegs } from '../../testkit/media-engine/far-end';
import { useMediaServer } from '../../testkit/media-engine/support';

describe('media-engine: 8 kHz audio on a wideband leg', function () {
  this.timeout(40000);
  let ms: MediaServer;
  useMediaServer({ ports: 40, workers: 1 }, (f) => ({ ms } = f));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'narrow-'));
  const { leg, track } = useToneLegs(() => ms);
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('G.722 bridged to PCMU: coded from 8 kHz (upper band empty); while recorded, from 16 kHz; heard both ways', async () => {
    const a = await leg('G722');
    const b = await leg('PCMU');
    await a.leg.bridge(b.leg);
    await Promise.all([a.far.sendTones(1.5, [[1000, 8000]]), b.far.sendTones(1.5, [[500, 8000]])]);
    expect(a.far.received, 'packets to the G.722 far end').to.be.greaterThan(50);
    expect(a.far.upperBandEmpty, 'coded from 8 kHz').to.equal(a.far.received);
    expect(toneShare(a.far.lastHeard(1), 500, 16000), 'the G.722 side hears the PCMU side').to.be.greaterThan(0.7);
    expect(toneShare(b.far.lastHeard(1), 1000, 8000), 'the PCMU side hears the G.722 side').to.be.greaterThan(0.7);

    // a recording of the G.722 leg reads its 16 kHz frames: they are made again
    const rec = a.leg.record(path.join(dir, 'a.wav'), { duration: 1 });
    a.far.clear();
    await Promise.all([a.far.sendTones(1.2, [[1000, 8000]]), b.far.sendTones(1.2, [[500, 8000]]), rec]);
    expect(a.far.received).to.be.greaterThan(40);
    expect(a.far.upperBandEmpty, 'coded from 16 kHz while recorded').to.be.below(a.far.received / 2);
    expect(toneShare(a.far.lastHeard(0.8), 500, 16000), 'still heard').to.be.greaterThan(0.7);
  });

  it('Opus bridged to PCMU: narrow band from the first packet (an 8 kHz encoder), heard as the tone of the PCMU side', async () => {
    const sock = dgram.createSocket('udp4');
    await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
    const dec = createCodec('opus');
    const heard: Int16Array[] = [];
    const tocs: number[] = [];
    sock.on('message', (m) => {
      if ((m[1] & 0x7f) !== 111 || m.length <= 12) return;
      tocs.push(m[12] >> 3);
      const out = new Int16Array(320);
      heard.push(out.subarray(0, dec.decode(m.subarray(12), out)));
    });
    try {
      const a = track(await ms.createEndpoint({ remoteSdp: offer('opus', sock.address().port) }));
      const b = await leg('PCMU');
      await a.bridge(b.leg);
      await b.far.sendTones(2, [[500, 8000]]);
      expect(tocs.length, 'Opus packets').to.be.greaterThan(80);
      // configurations 0-3: SILK narrow band (RFC 6716 3.1)
      expect(
        tocs.slice(-80).every((c) => c < 4),
        `configurations ${tocs.slice(-80).join(',')}`,
      ).to.equal(true);
      const last = new Int16Array(16000);
      let o = 0;
      for (const f of heard.slice(-50)) (last.set(f.subarray(0, Math.min(f.length, last.length - o)), o), (o += f.length));
      expect(toneShare(last, 500, 16000), 'the Opus side hears the PCMU side').to.be.greaterThan(0.7);
    } finally {
      sock.close();
      dec.close();
    }
  });
});
