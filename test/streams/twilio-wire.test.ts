// The per-frame pieces of a Twilio stream made cheap for 200 streams (issue 36's benchmark): the
// `media` text written directly is the JSON Twilio's wire has (the same as JSON.stringify of its
// object), µ-law through the G.711 tables round-trips, and the batched messages between a media
// worker and the API thread (a tick's fork frames, acknowledgements, injections) are checked as
// strictly as the single ones were.
import { expect } from 'chai';
import { mulawBase64ToPcm, pcmToMulawBase64, samplesToMulawBase64, TwilioMessages } from '../../core/streams/twilio';
import { decodeG711, muLaw } from '../../media-engine';
import { isFromWorker, isToWorker } from '../../media-engine/worker/protocol';
import { CountBatch, FrameBatch } from '../../media-engine/worker/frame-batch';

const ids = { streamSid: 'MZ0123456789abcdef0123456789abcdef', accountSid: 'AC' + '1'.repeat(32), callSid: 'CA' + '2'.repeat(32) };

function frame(n: number, amp = 12000): Int16Array {
  return Int16Array.from({ length: 160 }, (_, i) => Math.round(amp * Math.sin((2 * Math.PI * 440 * (n * 160 + i)) / 8000)));
}

describe('media streams: the Twilio wire, per frame', () => {
  it('media() writes the JSON JSON.stringify would, numbered per stream and per track, from samples or PCM bytes', () => {
    const m = new TwilioMessages(ids);
    const ref = new TwilioMessages(ids);
    m.start(['inbound', 'outbound'], {});
    ref.start(['inbound', 'outbound'], {});
    let seq = 1;
    const chunks = { inbound: 0, outbound: 0 };
    for (let n = 0; n < 6; n++) {
      const track = n % 3 === 2 ? 'outbound' : 'inbound';
      const f = frame(n, n === 4 ? 32767 : 12000);
      const bytes = Buffer.from(f.buffer, f.byteOffset, f.byteLength);
      const text = n % 2 ? m.media(track, n * 20.4, f) : m.media(track, n * 20.4, bytes);
      const want = JSON.stringify({
        event: 'media',
        sequenceNumber: String(++seq),
        media: { track, chunk: String(++chunks[track]), timestamp: String(Math.round(n * 20.4)), payload: pcmToMulawBase64(bytes) },
        streamSid: ids.streamSid,
      });
      expect(text).to.equal(want);
      expect(JSON.parse(text).media.payload).to.have.length(216); // 160 bytes of µ-law
    }
    expect(m.media('inbound', -5, frame(0))).to.contain('"timestamp":"0"');
  });

  it('mediaBytes() is the same text as media(), as ASCII bytes, numbered alike (samples, PCM bytes, an odd offset)', () => {
    const m = new TwilioMessages(ids);
    const ref = new TwilioMessages(ids);
    const odd = Buffer.alloc(321);
    for (let n = 0; n < 6; n++) {
      const track = n % 3 === 2 ? 'outbound' : 'inbound';
      const f = frame(n, n === 4 ? 32767 : -12000);
      Buffer.from(f.buffer).copy(odd, 1);
      const pcm = n % 3 === 0 ? f : n % 3 === 1 ? Buffer.from(f.buffer, f.byteOffset, f.byteLength) : odd.subarray(1);
      const bytes = m.mediaBytes(track, n * 19.6 - 10, pcm);
      expect(bytes).to.be.instanceOf(Buffer);
      expect(bytes.toString('latin1')).to.equal(ref.media(track, n * 19.6 - 10, f));
      expect(JSON.parse(bytes.toString()).media.payload).to.equal(samplesToMulawBase64(f));
    }
    // after a dtmf (numbered from the same sequence), the numbers go on
    expect(m.dtmf('5')).to.equal(ref.dtmf('5'));
    expect(m.mediaBytes('inbound', 200, frame(7)).toString()).to.equal(ref.media('inbound', 200, frame(7)));
  });

  it('µ-law through the tables: every sample encodes as muLaw.encodeSample does, and decodes back', () => {
    const all = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
    const b64 = samplesToMulawBase64(all);
    const bytes = Buffer.from(b64, 'base64');
    for (let i = 0; i < all.length; i += 97) expect(bytes[i]).to.equal(muLaw.encodeSample(all[i]!));
    const pcm = mulawBase64ToPcm(b64);
    const back = decodeG711('PCMU', bytes);
    for (let i = 0; i < all.length; i += 89) expect(pcm.readInt16LE(i * 2)).to.equal(back[i]);
    // an odd offset (a Buffer slice) takes the byte-wise path and says the same
    const odd = Buffer.alloc(321);
    Buffer.from(frame(1).buffer).copy(odd, 1);
    expect(pcmToMulawBase64(odd.subarray(1))).to.equal(samplesToMulawBase64(frame(1)));
  });

  it('batches: frames copied in order and handed out once; counts added per fork', () => {
    const b = new FrameBatch(8);
    const f = frame(0);
    b.add('a', f);
    f.fill(0); // the caller may reuse its array
    b.add('b', frame(1).subarray(0, 80), 16000);
    const out = b.take()!;
    expect(out.ids).to.deep.equal(['a', 'b']);
    expect(out.sizes).to.deep.equal([160, 80]);
    expect(out.tags).to.deep.equal([0, 16000]);
    expect([...out.samples.subarray(0, 160)]).to.deep.equal([...frame(0)]);
    expect([...out.samples.subarray(160)]).to.deep.equal([...frame(1).subarray(0, 80)]);
    expect(b.take()).to.equal(null);
    const c = new CountBatch();
    c.add('x');
    c.add('y');
    c.add('x');
    expect(c.take()).to.deep.equal({ ids: ['x', 'y'], counts: [2, 1] });
    expect(c.take()).to.equal(null);
  });

  it('the batched worker messages are checked: sizes must add up, rates and counts be valid', () => {
    const samples = new Int16Array(480);
    expect(isFromWorker({ t: 'forks', forkIds: ['a', 'b'], sizes: [160, 320], samples })).to.equal(true);
    expect(isToWorker({ t: 'injects', forkIds: ['a', 'b'], sizes: [160, 320], rates: [8000, 16000], samples })).to.equal(true);
    expect(isToWorker({ t: 'forkAcks', forkIds: ['a', 'b'], counts: [1, 3] })).to.equal(true);
    for (const bad of [
      { t: 'forks', forkIds: ['a'], sizes: [160, 320], samples },
      { t: 'forks', forkIds: ['a', 'b'], sizes: [160, 160], samples },
      { t: 'forks', forkIds: ['a', 1], sizes: [160, 320], samples },
      { t: 'forks', forkIds: ['a', 'b'], sizes: [160, 320], samples: [0] },
      { t: 'fork', forkId: 'a', frame: samples },
    ])
      expect(isFromWorker(bad), JSON.stringify({ ...bad, samples: undefined })).to.equal(false);
    for (const bad of [
      { t: 'injects', forkIds: ['a', 'b'], sizes: [160, 320], rates: [8000, 44100], samples },
      { t: 'injects', forkIds: ['a', 'b'], sizes: [160, 320], rates: [8000], samples },
      { t: 'injects', forkIds: ['a', 'b'], sizes: [-160, 640], rates: [8000, 8000], samples },
      { t: 'forkAcks', forkIds: ['a', 'b'], counts: [1] },
      { t: 'forkAcks', forkIds: ['a'], counts: [1.5] },
      { t: 'inject', forkId: 'a', samples },
      { t: 'forkAck', forkId: 'a', n: 1 },
    ])
      expect(isToWorker(bad), JSON.stringify({ ...bad, samples: undefined })).to.equal(false);
  });
});
