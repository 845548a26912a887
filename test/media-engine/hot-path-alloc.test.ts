/**
 * The media worker's per-packet and per-frame code allocates nothing in steady state (issue 25):
 * counted with V8's GC profiler (heap growth plus what each GC freed), which does not depend on the
 * machine's load. Also: the in-place RTP reader agrees with parseRtp, and the jitter buffer copies
 * what it is given (the receive path reuses one sample buffer for every packet).
 */
import { expect } from 'chai';
import { decodeG711, decodeG711Range, encodeG711, encodeG711Range } from '../../core/audio/g711';
import { JitterBuffer } from '../../media-engine/jitter/jitter-buffer';
import { newRtpHeader, parseRtp, readRtpHeader, serializeRtp, writeRtpInto } from '../../media-engine/rtp-packet/packet';
import { TelephoneEventSender } from '../../media-engine/rtp-packet/telephone-event';
import type { NegotiatedMedia } from '../../media-engine/sdp/sdp';
import { LegCodec } from '../../media-engine/worker/leg-codec';
import { WideFrames } from '../../media-engine/worker/leg-wide';
import { ConferenceMixer, type MixMember } from '../../media-engine/worker/mixer';
import { ForkTap } from '../../media-engine/fork';
import { InjectMember, offerMix } from '../../media-engine/worker/conference-fork';
import { writeWav } from '../../media-engine/audio/wav';
import { Player } from '../../media-engine/player';
import { WideFileReader } from '../../media-engine/sources/wide-reader';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RtpCapture } from '../../media-engine/worker/rtp-capture';
import { LegEchoCanceller } from '../../media-engine/worker/leg-aec';
import { allocatedPerCall } from '../../testkit/media-engine/heap';

/**
 * Bytes allocated per call of `fn` over `n` calls, after a warm-up. The heap is the whole process's, so
 * what earlier suites left running (sockets, timers) allocates into it too: the least of three rounds
 * is `fn`'s own (the noise only adds).
 */
function bytesPerCall(fn: (i: number) => void, n = 200_000): number {
  for (let i = 0; i < 20_000; i++) fn(i);
  return Math.min(allocatedPerCall(fn, n), allocatedPerCall(fn, n), allocatedPerCall(fn, n));
}

/**
 * As bytesPerCall, for code whose steady state needs the optimising compiler (a double computed per
 * call is a heap number until the function is optimised): V8 compiles on a background thread, so on a
 * busy machine the rounds can run before the optimised code is installed. A pause after the warm-up
 * lets it land, as it has long before a capture's thousandth packet on a live leg.
 */
async function bytesPerCallOptimised(fn: (i: number) => void, n: number): Promise<number> {
  for (let i = 0; i < 20_000; i++) fn(i);
  await new Promise((r) => setTimeout(r, 200));
  return bytesPerCall(fn, n);
}

describe('media-engine hot path: no allocation per packet or frame', () => {
  it("a leg's echo canceller cleans a frame (and a tick with nothing received) without allocating", () => {
    const aec = new LegEchoCanceller({ tailMs: 400 }, 8000);
    const near = new Int16Array(160);
    const far = new Int16Array(160);
    for (let i = 0; i < 160; i++) far[i] = Math.round(8000 * Math.sin(i / 3));
    try {
      expect(bytesPerCall((i) => aec.cancel(i % 50 === 0 ? null : near, far, 8000), 5_000)).to.be.below(1);
    } finally {
      aec.close();
    }
  });

  it('the jitter buffer takes and plays a 20 ms stream without allocating (entries are pooled)', () => {
    const jb = new JitterBuffer(1, 8, 2);
    const inBuf = new Int16Array(1600);
    const out = new Int16Array(160);
    const base = 0x9000_0000 | 0; // a timestamp above 2^31 as an unsigned value
    const perFrame = bytesPerCall((i) => {
      inBuf[0] = i & 0x7fff;
      jb.push((base + i * 160) | 0, inBuf, 160);
      jb.pop(out);
    });
    expect(perFrame).to.be.below(1);
  });

  it('reads an RTP header in place and writes a packet into a reused buffer without allocating', () => {
    const h = newRtpHeader();
    const pkt = Buffer.alloc(172, 0x55);
    const payload = new Uint8Array(160);
    const perPacket = bytesPerCall((i) => {
      writeRtpInto(pkt, false, 0, i & 0xffff, (0xf000_0000 + i * 160) | 0, 0xdead_beef | 0, payload, 160);
      readRtpHeader(pkt, h);
    });
    expect(perPacket).to.be.below(1);
  });

  it('the telephone-event sender builds each packet in place (a relayed digit costs nothing per tick)', () => {
    const s = new TelephoneEventSender();
    const pkt = Buffer.alloc(172);
    const perTick = bytesPerCall((i) => {
      if (!s.busy) s.enqueue('5', 8000); // one queue entry per 400 ticks
      const ev = s.next(160);
      if (ev) writeRtpInto(pkt, ev.marker, 101, i & 0xffff, 0x1000, 0xdead_beef | 0, ev.payload, ev.payload.length);
    });
    expect(perTick).to.be.below(1);
  });

  it('an RTP capture records each packet into its buffer without allocating (RTP_CAPTURE on)', async () => {
    const pkt = Buffer.alloc(172, 0x80);
    const rtcp = Buffer.alloc(60, 0x81);
    const arrival = performance.now(); // a received packet's arrival (the transport's number, already on the heap)
    // each capture has room for its 190,000 packets (two warm-ups and three rounds of 50,000), allocated first
    const sent = new RtpCapture({ maxPackets: 200_000, headersOnly: false });
    sent.sendTime = Date.now();
    expect(await bytesPerCallOptimised(() => sent.add(-1, 0x7f000001, 30000, 0x7f000001, 40000, pkt, 172, false), 50_000), 'sent RTP').to.be.below(1);
    const received = new RtpCapture({ maxPackets: 200_000, headersOnly: true });
    expect(await bytesPerCallOptimised(() => received.add(arrival, 0x7f000001, 40000, 0x7f000001, 30000, pkt, 172, false), 50_000), 'received RTP, headers only').to.be.below(1);
    const full = new RtpCapture({ maxPackets: 10, headersOnly: false });
    expect(await bytesPerCallOptimised(() => full.add(arrival, 0x7f000001, 40001, 0x7f000001, 30001, rtcp, 60, true), 50_000), 'a full capture').to.be.below(1);
  });

  it('encodes and decodes G.711 ranges without allocating', () => {
    const pcm = Int16Array.from({ length: 160 }, (_, i) => i * 100 - 8000);
    const bytes = new Uint8Array(160);
    const back = new Int16Array(160);
    expect(bytesPerCall(() => decodeG711Range('PCMU', bytes, 0, encodeG711Range('PCMU', pcm, 0, 160, bytes), back))).to.be.below(1);
    expect(Array.from(back)).to.deep.equal(Array.from(decodeG711('PCMU', encodeG711('PCMU', pcm))));
  });
});

describe('media-engine wideband hot path: no allocation per frame (G.722, Opus)', () => {
  const media = (codec: 'G722' | 'opus', payloadType: number, clockRate: number): NegotiatedMedia => ({
    codec,
    payloadType,
    clockRate,
    fmtp: '',
    dtmfPayloadType: null,
    dtmfClockRate: clockRate,
    remoteAddress: '127.0.0.1',
    remotePort: 4000,
    remoteRtcpPort: 4001,
    ptime: 20,
    direction: 'sendrecv',
    send: true,
    receive: true,
  });
  for (const [codec, pt, clock] of [
    ['G722', 9, 8000],
    ['opus', 111, 48000],
  ] as const) {
    it(`${codec}: receive (FEC, decode, timestamp mapping, jitter buffer, down to 8 kHz) and send (up to 16 kHz, encode) allocate nothing`, function () {
      this.timeout(120_000); // Opus encodes at about 0.1 ms a frame: 35,000 frames
      const lc = new LegCodec(media(codec, pt, clock));
      const w = new WideFrames(lc.rate);
      const jb = new JitterBuffer(1, 8, 2, lc.frame);
      const rx = new Int16Array(2880);
      const narrow = new Int16Array(160);
      for (let i = 0; i < 160; i++) narrow[i] = Math.round(8000 * Math.sin(i / 5));
      let len = 0;
      const sent = (bytes: number): void => {
        len = bytes; // the packet stays in lc.payload, where the codec wrote it
      };
      const perFrame = bytesPerCall((i) => {
        lc.encodeFrame(w.up(narrow), sent);
        if (lc.hasFec && i % 20 === 0) lc.recover(lc.payload, 0, len, rx); // Opus: a loss rebuilt from FEC now and then
        const n = lc.decode(lc.payload, 0, len, rx);
        jb.push(lc.sampleTsOf((i * lc.frameTicks) | 0), rx, n);
        if (jb.pop(w.in)) w.down(narrow);
      }, 5_000);
      lc.close();
      w.close();
      expect(perFrame).to.be.below(1);
    });
  }
});

describe('media-engine fork path: one copy per frame for the consumer, nothing else', () => {
  // the copy posted to the API thread is the consumer's (transferred): 2 bytes a sample plus the
  // typed array's own object; anything per frame beyond it (a resampler, a scratch frame) would show
  const copy = (samples: number) => samples * 2 + 200;
  it('a 16 kHz fork (transcription of a G.722 leg) and an 8 kHz one post their frame and allocate nothing more', () => {
    let got = 0;
    const post = (f: Int16Array): void => {
      got += f.length;
    };
    const wide = new ForkTap('w', 'in', post, 1e9, 16000);
    const narrow = new ForkTap('n', 'in', post, 1e9, 8000);
    const f16 = Int16Array.from({ length: 320 }, (_, i) => Math.round(8000 * Math.sin(i / 3)));
    const f8 = Int16Array.from({ length: 160 }, (_, i) => Math.round(8000 * Math.sin(i / 3)));
    expect(bytesPerCall(() => wide.offer(f16), 50_000)).to.be.below(copy(320));
    expect(bytesPerCall(() => narrow.offer(f8), 50_000)).to.be.below(copy(160));
    // its leg turned narrowband (re-INVITE): 8 kHz frames resampled up by the fork's one resampler
    expect(bytesPerCall(() => wide.offerNarrow(f8), 50_000)).to.be.below(copy(320));
    expect(got % 160).to.equal(0);
    wide.close();
  });
});

describe('media-engine wideband prompts and injection: no allocation per frame', () => {
  it('a 48 kHz prompt played to a wideband leg (read a second at a time, resampled to 16 kHz once) allocates nothing per frame', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hot-wide-'));
    const file = path.join(dir, 'p48.wav');
    writeWav(
      file,
      Int16Array.from({ length: 48000 * 2 }, (_, i) => Math.round(8000 * Math.sin(i / 4))),
      48000,
    );
    const player = new Player();
    void player.enqueue([async () => new WideFileReader(file, { loop: true })]);
    const out = new Int16Array(160);
    const wide = new Int16Array(320);
    const narrow = new WideFileReader(file, { loop: true }); // the leg turned narrowband: 16 kHz down to 8 kHz
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      expect(player.readFrame(out, wide)).to.equal(16000);
      // one fs.readSync a second (50 frames) is all: below a byte a frame on average
      expect(bytesPerCall(() => player.readFrame(out, wide), 20_000)).to.be.below(2);
      expect(bytesPerCall(() => narrow.readFrame(out), 20_000)).to.be.below(2);
      player.stop();
      narrow.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
  });

  it('injected audio taken at the other rate (8 kHz up for a wideband leg, 16 kHz down for a G.711 one) allocates nothing per frame', () => {
    const n = 5_000;
    for (const [injected, taken] of [
      [8000, 16000],
      [16000, 8000],
      [16000, 16000],
    ] as const) {
      const tap = new ForkTap('i', 'in', () => undefined, 50, 8000, 1e9);
      // queued up front: inject() runs when the consumer's message arrives, not in the tick
      const chunk = Int16Array.from({ length: injected / 50 }, (_, i) => Math.round(8000 * Math.sin(i / 3)));
      for (let k = 0; k < 20_000 + 3 * n + 10; k++) tap.inject(chunk, injected);
      expect(
        bytesPerCall(() => tap.nextInjectedAt(taken), n),
        `${injected} taken at ${taken}`,
      ).to.be.below(1);
      tap.close();
    }
  });
});

describe('media-engine conference mixer: no allocation per tick', () => {
  /** A member with fixed frames: wideband ones give 16 kHz frames and take the 16 kHz N-1 mix. */
  function member(id: string, wideband: boolean): MixMember {
    const narrow = Int16Array.from({ length: 160 }, (_, i) => Math.round(4000 * Math.sin(i / 3)));
    const wide = Int16Array.from({ length: 320 }, (_, i) => Math.round(4000 * Math.sin(i / 2)));
    return { id, wideband, input: () => narrow, inputWide: () => wide, mixOut: new Int16Array(160), mixOutWide: new Int16Array(320), muteIn: false, muteOut: false };
  }
  for (const wideband of [false, true])
    it(`${wideband ? 'a 16 kHz room (two G.722 members, one G.711)' : 'an 8 kHz room (three G.711 members)'} mixes without allocating`, () => {
      const mixer = new ConferenceMixer('alloc');
      for (const m of [member('a', wideband), member('b', wideband), member('c', false)]) mixer.join(m);
      const perTick = bytesPerCall(() => mixer.tick(), 50_000);
      expect(mixer.wide).to.equal(wideband);
      mixer.close();
      expect(perTick).to.be.below(1);
    });
});

describe('media-engine conference forks: no allocation per tick beyond the consumer copy', () => {
  it('16 kHz audio injected into a room (a wideband member) mixes, and a 16 kHz fork is offered the mix, allocating only its copy', () => {
    const mixer = new ConferenceMixer('inject');
    const narrow = Int16Array.from({ length: 160 }, (_, i) => Math.round(4000 * Math.sin(i / 3)));
    mixer.join({ id: 'g711', input: () => narrow, mixOut: new Int16Array(160), muteIn: false, muteOut: false });
    const tap = new ForkTap('f', 'both', () => undefined, 1e9, 16000, 1e9);
    const chunk = Int16Array.from({ length: 320 }, (_, i) => Math.round(8000 * Math.sin(i / 2)));
    const n = 5_000;
    for (let k = 0; k < 20_000 + 3 * n + 10; k++) tap.inject(chunk, 16000);
    mixer.join(new InjectMember(tap));
    const forks = new Map([['f', tap]]);
    const perTick = bytesPerCall(() => {
      mixer.tick();
      offerMix(forks, mixer);
    }, n);
    expect(mixer.wide).to.equal(true);
    expect(perTick).to.be.below(320 * 2 + 200);
    mixer.close();
    tap.close();
  });
});

describe('media-engine: the in-place RTP reader and the copying jitter buffer', () => {
  it('readRtpHeader agrees with parseRtp (CSRCs, extension, padding, marker, 32-bit fields as signed)', () => {
    const payload = Uint8Array.from({ length: 20 }, (_, i) => i);
    const cases = [
      serializeRtp({ payloadType: 0, sequenceNumber: 65535, timestamp: 0xffff_fff0, ssrc: 0x8000_0001, payload }),
      serializeRtp({ marker: true, payloadType: 101, sequenceNumber: 7, timestamp: 160, ssrc: 42, csrcs: [1, 2, 3], extension: { profile: 0xbede, data: new Uint8Array(8) }, padding: 4, payload }),
    ];
    for (const buf of cases) {
      const p = parseRtp(buf)!;
      const h = newRtpHeader();
      expect(readRtpHeader(buf, h)).to.equal(true);
      expect({ marker: h.marker, pt: h.payloadType, seq: h.sequenceNumber, ts: h.timestamp >>> 0, ssrc: h.ssrc >>> 0 }).to.deep.equal({
        marker: p.marker,
        pt: p.payloadType,
        seq: p.sequenceNumber,
        ts: p.timestamp,
        ssrc: p.ssrc,
      });
      expect(Array.from(buf.subarray(h.payloadOffset, h.payloadEnd))).to.deep.equal(Array.from(p.payload));
    }
    const h = newRtpHeader();
    const bad = [new Uint8Array(11), Uint8Array.from([0x40, ...new Array(11).fill(0)]), Uint8Array.from([0x81, ...new Array(11).fill(0)])];
    for (const b of bad) expect(readRtpHeader(b, h), String(b[0])).to.equal(false);
    const padded = Buffer.from(cases[1]);
    padded[padded.length - 1] = 200; // padding longer than the payload
    expect(parseRtp(padded)).to.equal(null);
    expect(readRtpHeader(padded, h)).to.equal(false);
  });

  it('the jitter buffer keeps its own copy: the caller may overwrite its buffer after push', () => {
    const jb = new JitterBuffer(1, 8, 1);
    const buf = new Int16Array(1600);
    const out = new Int16Array(160);
    buf.fill(1, 0, 160);
    jb.push(0, buf, 160);
    buf.fill(2, 0, 160);
    jb.push(160, buf, 160);
    buf.fill(9);
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) {
      jb.pop(out);
      seen.push(out[0]);
    }
    expect(seen).to.deep.equal([0, 1, 2]);
  });
});
