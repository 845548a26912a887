// The caller's audio to ai_talk's recogniser through a stalled event loop (docs/evals.md "Performance"):
// at 50 calls starting at once media-app's event loop stalled ~1 s, the acknowledgements of the agent's
// forks waited with it, and the media worker dropped the caller's first words past 50 frames. A far end in
// its own thread (so it keeps time while this one stalls) sends 150 numbered frames; this thread stalls
// 1.5 s meanwhile. The fork opened as the agent opens its own (media-app/ai/voice.ts) hears each frame,
// once, in order; none dropped.
import { expect } from 'chai';
import dgram from 'node:dgram';
import type { Endpoint, MediaServer } from '../../media-engine';
import { encodeG711 } from '../../core/audio/g711';
import { AGENT_FORK_MAX_IN_FLIGHT } from '../../media-app/ai/voice';
import { numbered, numberOf, pcmuOffer, useMediaServer } from '../../testkit/media-engine/support';
import { pacedSender } from '../../testkit/thread-stall';

const FRAMES = 150;
const STALL_MS = 1500;

function packet(n: number): Buffer {
  const p = Buffer.alloc(12 + 160);
  p[0] = 0x80;
  p.writeUInt16BE(n, 2);
  p.writeUInt32BE(n * 160, 4);
  p.writeUInt32BE(0x1234abcd, 8);
  Buffer.from(encodeG711('PCMU', numbered(n))).copy(p, 12);
  return p;
}

describe('ai_talk: the caller heard through a stalled event loop', function () {
  this.timeout(30_000);
  let ms: MediaServer;
  useMediaServer({ ports: 20, workers: 1 }, (f) => ({ ms } = f));

  let sock: dgram.Socket;
  let ep: Endpoint;
  beforeEach(async () => {
    sock = dgram.createSocket('udp4');
    await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
    ep = await ms.createEndpoint({ remoteSdp: pcmuOffer(sock.address().port) });
  });
  afterEach(async () => {
    await ep.destroy();
    sock.close();
  });

  it(`a ${STALL_MS} ms stall loses none of the caller's frames on a fork opened as the agent's`, async () => {
    const heard: number[] = [];
    // resolved by the fork's frames: once a frame numbered `n` or more was heard
    const waits: { n: number; resolve: () => void }[] = [];
    const onFrame = (f: Int16Array) => {
      const n = numberOf(f);
      heard.push(n);
      for (const w of waits.filter((x) => n >= x.n)) {
        waits.splice(waits.indexOf(w), 1);
        w.resolve();
      }
    };
    const heardUpTo = (n: number) => new Promise<void>((resolve) => waits.push({ n, resolve }));
    const fork = await ep.forkAudioStart({ mix: 'in', maxInFlight: AGENT_FORK_MAX_IN_FLIGHT, legRate: true, early: true, onFrame });
    const packets = Array.from({ length: FRAMES }, (_, i) => packet(i + 1));
    const sender = await pacedSender(packets, ep.local.port);
    // the far end the SDP names is the sender's socket (strict RTP takes the signalled source at its first packet)
    await ep.modify(pcmuOffer(sender.port));
    sender.go();
    // the stream flowing through the fork (20 frames, 400 ms) before the stall
    await heardUpTo(20);
    // the stall: this thread busy, as media-app's was with 50 calls starting
    const until = performance.now() + STALL_MS;
    while (performance.now() < until);
    await sender.done;
    await heardUpTo(FRAMES);
    await sender.stop();
    const stats = await fork.stop();
    const numbers = heard.filter((n) => n >= 0);
    expect(numbers.slice(0, FRAMES), 'every frame, once, in order').to.deep.equal(Array.from({ length: FRAMES }, (_, i) => i + 1));
    // then the jitter buffer's concealment of the last one, once it stopped coming
    expect(numbers.slice(FRAMES).every((n) => n === FRAMES)).to.equal(true);
    expect(stats!.dropped, 'frames the worker dropped').to.equal(0);
  });
});
