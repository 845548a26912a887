// Opus in-band FEC on the receive path (issue #34): two Opus endpoints through the lossy relay with
// 5 % of A's packets dropped (spread evenly: never two in a row). B rebuilds every lost packet from the
// next one's FEC before its playout time, so its jitter buffer conceals no frame at all: no gap, not
// even of one frame; the G.722 leg, which has no FEC, conceals about one frame per loss.
import { expect } from 'chai';
import type { AudioCodecName, Endpoint, MediaServer } from '../../media-engine';
import { LossyRelay } from '../../testkit/lossy-relay';
import { sleep, useMediaServer } from '../../testkit/media-engine/support';

const withPort = (sdp: string, port: number) => sdp.replace(/m=audio \d+/, `m=audio ${port}`);

describe('media-engine Opus FEC on receive', function () {
  this.timeout(60000);
  let ms: MediaServer;
  let speech: string;
  useMediaServer({ ports: 100, workers: 1, speech: 'Forward error correction rebuilds a lost packet from the next one, so the listener hears no gap.' }, (f) => ({ ms, speech } = f));

  async function lossy(codec: AudioCodecName): Promise<{ relay: LossyRelay; a: Endpoint; b: Endpoint }> {
    const relay = await LossyRelay.open({ toFar: { lossPct: 5, jitterMs: 0 }, seed: 7 });
    const a = await ms.createEndpoint({ codecs: [codec] });
    const b = await ms.createEndpoint({ remoteSdp: withPort(a.local.sdp, relay.far.rtpPort), near: a });
    await a.modify(withPort(b.local.sdp, relay.near.rtpPort));
    await relay.setNearPeer('127.0.0.1', a.local.port);
    await relay.setFarPeer('127.0.0.1', b.local.port);
    return { relay, a, b };
  }

  for (const codec of ['opus', 'G722'] as const)
    it(`${codec}: 5 % loss, ${codec === 'opus' ? 'every lost packet rebuilt from FEC, no frame concealed' : 'no FEC: about one frame concealed per loss'}`, async () => {
      const { relay, a, b } = await lossy(codec);
      try {
        // A sends all along (speech, then silence frames): measure over a window inside the stream
        await sleep(1000);
        const s0 = await b.getStats();
        const d0 = relay.counts.toFar.dropped;
        await a.play(speech);
        const s1 = await b.getStats();
        const dropped = relay.counts.toFar.dropped - d0;
        const s = { recovered: s1.recovered - s0.recovered, concealed: s1.concealed - s0.concealed, late: s1.late - s0.late, stalled: s1.stalled - s0.stalled };
        expect(dropped, 'the relay dropped 5 %').to.be.greaterThan(8);
        if (codec === 'opus') {
          // none concealed but at the window's edge; a loaded machine conceals frames of its own (a stall
          // of the process: the worker's catch-up pops before the relay forwards, the packets then come
          // late): when any packet came late or in a stall, the gap says nothing of FEC, and only the
          // rebuilding below is judged
          if (s.late + s.stalled === 0) expect(s.concealed, 'frames concealed: no gap').to.be.at.most(1);
          else console.log(`      ${s.late} packets late, ${s.stalled} in a stall: ${s.concealed} frames concealed, not judged`);
          // a frame rebuilt after its playout time is refused as late (and still counted recovered): were
          // the rebuilding too slow, about every loss would be late; a stall makes a few
          expect(s.late, `late frames (rebuilt ones too) of ${dropped} losses`).to.be.below(dropped / 2);
          // the window's edges may split a loss from the packet that rebuilds it
          expect(s.recovered, 'lost packets rebuilt from the next one').to.be.within(dropped - 1, dropped + 1);
        } else {
          expect(s.recovered).to.equal(0);
          expect(s.concealed).to.be.at.least(dropped - 1);
        }
      } finally {
        await relay.close();
        await a.destroy();
        await b.destroy();
      }
    });
});
