// A cloud recogniser's socket on a quiet line (media-engine/stt/cloud.ts, docs/ai.md "Turn-taking"):
// every 20 ms frame was one WebSocket message, 5,000 writes a second at 100 agent calls, most of them
// silence while the agent speaks. Once the line has been quiet longer than anything the vendor ends
// on (its endpointing, its utterance end), quiet frames go out five at a time; the first loud frame
// sends what was held and itself at once, so speech is never late, and the vendor gets the same audio
// in the same order. Against a real WebSocket server on loopback. Frames are written one a turn of
// the event loop, as a fork delivers them in real time; frames written in one turn (a stalled loop's
// backlog) go in messages of up to BURST_FRAMES (the last test).
import { expect } from 'chai';
import { EventEmitter, once } from 'node:events';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AddressInfo } from 'node:net';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';
import { BURST_FRAMES, CloudSttStream, type CloudWire } from '../../media-engine/stt/cloud';

const FRAME = 160;
const loopback = () => new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }));

function wire(url: string, quietAfterMs?: number): CloudWire {
  return {
    vendor: 'test',
    url: new URL(url),
    headers: {},
    encode: (pcm) => Buffer.from(pcm),
    endMessage: JSON.stringify({ type: 'CloseStream' }),
    endTimeoutMs: 2000,
    onMessage: () => undefined,
    isLast: (m) => m.type === 'Metadata',
    ...(quietAfterMs === undefined ? {} : { quietAfterMs }),
  };
}

/** A frame of `level` (a square wave of that amplitude; 0: digital silence), its first sample `tag`. */
function frame(level: number, tag: number): Int16Array {
  const f = new Int16Array(FRAME);
  for (let i = 0; i < FRAME; i++) f[i] = i % 2 ? -level : level;
  f[0] = tag;
  return f;
}

describe('cloud recogniser socket on a quiet line', function () {
  this.timeout(20_000);
  let wss: WebSocketServer;
  let url: string;
  /** binary messages received, with the time each came */
  let got: { at: number; bytes: Buffer }[];
  let sock: Promise<WebSocket>;
  /** 'message' at each binary message received */
  let arrivals: EventEmitter<{ message: [] }>;

  beforeEach(async () => {
    got = [];
    arrivals = new EventEmitter();
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((r) => wss.once('listening', r));
    url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/v1/listen`;
    sock = new Promise((resolve) =>
      wss.once('connection', (ws) => {
        ws.on('message', (d, binary) => {
          if (binary) {
            got.push({ at: performance.now(), bytes: d as Buffer });
            arrivals.emit('message');
          } else if (JSON.parse(String(d)).type === 'CloseStream') {
            ws.send(JSON.stringify({ type: 'Metadata' }));
          }
        });
        resolve(ws);
      }),
    );
  });
  afterEach(async () => {
    for (const c of wss.clients) c.terminate();
    await new Promise((r) => wss.close(r));
  });

  /** the next turn of the event loop (a fork's next frame comes in a later one) */
  const turn = () => new Promise((r) => setImmediate(r));

  /** Resolves once `ok` holds of the messages received, checked at each one; rejects after `ms` (its timer the wait's own). */
  const received = (ok: () => boolean, what: string, ms = 2000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!ok()) return;
        done();
        resolve();
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${what}: not within ${ms} ms (${got.length} messages)`));
      }, ms);
      const done = () => {
        clearTimeout(timer);
        arrivals.off('message', check);
      };
      arrivals.on('message', check);
      check();
    });

  /** The first frame waits for the open socket: resolves once it has arrived. */
  const open = async () => {
    await sock;
    await received(() => got.length > 0, 'the first frame');
  };

  /**
   * Resolves once every message the client sent before now has arrived: the client's pong to our ping
   * goes out after them on the one ordered socket.
   */
  const drained = async () => {
    const ws = await sock;
    const pong = once(ws, 'pong');
    ws.ping();
    await pong;
  };

  /** True when the newest message's first or last frame is the one tagged `tag`. */
  const lastTagged = (tag: number) => {
    const m = got.at(-1);
    return !!m && (m.bytes.readInt16LE(0) === tag || m.bytes.readInt16LE(m.bytes.length - FRAME * 2) === tag);
  };

  it('sends quiet frames five at a time after the quiet hold, and speech at once and in order', async () => {
    const s = new CloudSttStream(wire(url, 400), loopback(), 1 << 20);
    const sent: Int16Array[] = [];
    const write = (f: Int16Array) => {
      sent.push(f.slice());
      s.write(f);
    };
    write(frame(3000, 1));
    await open();
    // 3 s of a quiet line (-65 dBFS noise-like square wave), then speech
    for (let i = 0; i < 150; i++) {
      write(frame(18, 2));
      await turn();
    }
    await drained();
    const beforeSpeech = got.length;
    const speechAt = performance.now();
    write(frame(3000, 3));
    await received(() => lastTagged(3), 'the speech frame');
    const speechMsg = got.at(-1)!;
    await s.end();

    // 1 loud + 20 quiet frames within the 400 ms hold went one by one; the other 130 quiet frames five at a time
    expect(beforeSpeech, 'messages before the speech').to.be.at.most(1 + 20 + Math.ceil(130 / 5));
    expect(beforeSpeech, 'messages before the speech').to.be.at.least(1 + 20 + Math.floor(130 / 5));
    // the speech frame came without waiting for more quiet ones, after what was held
    expect(speechMsg.at - speechAt, 'ms from the loud frame to its message').to.be.below(100);
    const all = Buffer.concat(got.map((g) => g.bytes));
    const want = Buffer.concat(sent.map((f) => Buffer.from(f.buffer, f.byteOffset, f.byteLength)));
    expect(all.equals(want), 'the same audio, in order').to.equal(true);
  });

  it('keeps one message a frame while the line carries sound', async () => {
    const s = new CloudSttStream(wire(url, 400), loopback(), 1 << 20);
    s.write(frame(3000, 1));
    await open();
    // -40 dBFS: quiet to the ear, far over the gate
    for (let i = 0; i < 60; i++) {
      s.write(frame(330, 2));
      await turn();
    }
    await s.end();
    expect(got.length).to.equal(61);
  });

  it('sends what it held before the end of the stream', async () => {
    const s = new CloudSttStream(wire(url, 100), loopback(), 1 << 20);
    s.write(frame(3000, 1));
    await open();
    for (let i = 0; i < 8; i++) {
      s.write(frame(0, 2));
      await turn();
    }
    await s.end();
    const bytes = got.reduce((n, g) => n + g.bytes.length, 0);
    expect(bytes, 'every frame reached the vendor').to.equal(9 * FRAME * 2);
    // 1 loud, 5 quiet inside the 100 ms hold one by one, the last 3 held and sent by end()
    expect(got.length).to.equal(1 + 5 + 1);
  });

  it('sends a backlog written in one turn in messages of BURST_FRAMES frames, the same audio in order', async () => {
    // a loop held up (docs/evals.md "Performance") gets the media worker's queued batches at once: one
    // message a frame was one WebSocket frame and one write each, 50 calls' worth in that one turn
    const s = new CloudSttStream(wire(url, 400), loopback(), 1 << 20);
    const sent: Int16Array[] = [frame(3000, 1)];
    s.write(sent[0]!);
    await open();
    for (let i = 0; i < 50; i++) {
      const f = frame(3000, 10 + i);
      sent.push(f.slice());
      s.write(f);
      f.fill(0); // the caller may reuse its frame once written
    }
    const chunks = 50 / BURST_FRAMES;
    await received(() => got.length >= 1 + chunks, 'the backlog');
    await drained();
    const backlogAt = got.length;
    // the next frame, alone in its turn, goes alone and at once
    const lone = frame(3000, 99);
    sent.push(lone.slice());
    const t = performance.now();
    s.write(lone);
    await received(() => lastTagged(99), 'the lone frame');
    const loneMs = got.at(-1)!.at - t;
    await s.end();
    expect(backlogAt, 'messages: the first frame, then the backlog').to.equal(1 + chunks);
    for (let k = 1; k <= chunks; k++) expect(got[k]!.bytes.length, `the backlog's message ${k}`).to.equal(BURST_FRAMES * FRAME * 2);
    expect(got.length, 'messages in all').to.equal(2 + chunks);
    expect(loneMs, 'ms from a lone frame to its message').to.be.below(100);
    const all = Buffer.concat(got.map((g) => g.bytes));
    const want = Buffer.concat(sent.map((f) => Buffer.from(f.buffer, f.byteOffset, f.byteLength)));
    expect(all.equals(want), 'the same audio, in order').to.equal(true);
  });
});
