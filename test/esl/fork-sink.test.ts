// The end-to-end script's audio fork sink (scripts/fsmrf/measure.ts ForkSink) over a real WebSocket on
// loopback: `untilSamples(n)` resolves on the binary frame that brings the n-th sample (no polling), at
// once when they are there already, and rejects after its timeout saying how many came.
import { expect } from 'chai';
import { WebSocket } from 'ws';
import { ForkSink } from '../../scripts/fsmrf/measure';

describe('fsmrf e2e script: the fork sink wakes its waiters on the frames', () => {
  it('resolves on the frame bringing the n-th sample, at once when there, rejects after its timeout', async () => {
    const sink = await ForkSink.start();
    const ws = new WebSocket(sink.url, 'audio.drachtio.org');
    ws.on('error', () => undefined);
    try {
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      ws.send('{"e2e":true}');
      let second: Int16Array | undefined;
      const waiting = sink.untilSamples(800, 5000).then((s) => (second = s));
      const frame = (v: number) => Buffer.from(new Int16Array(160).fill(v).buffer);
      for (let i = 1; i <= 4; i++) ws.send(frame(i));
      const four = await sink.untilSamples(640, 5000);
      expect(four.length).to.equal(640);
      expect(second, 'not woken before its 800th sample').to.equal(undefined);
      ws.send(frame(5));
      await waiting;
      expect(second!.length).to.equal(800);
      expect(second![799]).to.equal(5);
      expect((await sink.untilSamples(100, 1)).length).to.equal(800);
      const late = await sink.untilSamples(8000, 100).then(
        () => null,
        (e: Error) => e.message,
      );
      expect(late).to.equal('timed out after 100 ms waiting for 8000 samples at the WebSocket server (800 came)');
      expect(sink.texts).to.deep.equal(['{"e2e":true}']);
    } finally {
      ws.close();
      await sink.close();
    }
  });
});
