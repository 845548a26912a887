import { expect } from 'chai';
import { encodeFrame, FrameDecoder, FramingError } from '../../../sip-server/drachtio/framing';

describe('drachtio framing', () => {
  it('length counts UTF-8 bytes, not characters', () => {
    const payload = 'id|sip||\r\nMESSAGE sip:a@b SIP/2.0\r\nSubject: caf\u00e9 \u{1F600}\r\n\r\n';
    const frame = encodeFrame(payload);
    const hash = frame.indexOf('#');
    const len = Number(frame.toString('latin1', 0, hash));
    expect(len).to.equal(Buffer.byteLength(payload, 'utf8'));
    expect(len).to.be.greaterThan(payload.length);
    expect(new FrameDecoder().push(frame)).to.deep.equal([payload]);
  });

  it('reassembles a frame split anywhere, including inside the length and inside a multi-byte char', () => {
    const payload = 'x|y|\u00e9\u00e9\u{1F600}z';
    const frame = encodeFrame(payload);
    for (let cut = 1; cut < frame.length; cut++) {
      const d = new FrameDecoder();
      const a = d.push(frame.subarray(0, cut));
      const b = d.push(frame.subarray(cut));
      expect([...a, ...b], `cut at ${cut}`).to.deep.equal([payload]);
      expect(d.pendingBytes).to.equal(0);
    }
  });

  it('returns several frames from one chunk and keeps the remainder', () => {
    const frames = Buffer.concat([encodeFrame('a|ping'), encodeFrame('b|ping'), encodeFrame('c|route|invite')]);
    const d = new FrameDecoder();
    const out = d.push(frames.subarray(0, frames.length - 3));
    expect(out).to.deep.equal(['a|ping', 'b|ping']);
    expect(d.push(frames.subarray(frames.length - 3))).to.deep.equal(['c|route|invite']);
  });

  it('byte-at-a-time delivery works', () => {
    const frames = Buffer.concat([encodeFrame('one'), encodeFrame('tw\u00f6')]);
    const d = new FrameDecoder();
    const out: string[] = [];
    for (const byte of frames) out.push(...d.push(Buffer.from([byte])));
    expect(out).to.deep.equal(['one', 'tw\u00f6']);
  });

  for (const [name, bad] of [
    ['a letter in the length', 'a2#xx'],
    ['a missing length', '#abc'],
    ['a zero length', '0#'],
    ['an over-long length specifier', '123456789#x'],
    ['a negative length', '-5#abcde'],
  ] as const) {
    it(`rejects ${name}`, () => {
      expect(() => new FrameDecoder().push(Buffer.from(bad))).to.throw(FramingError);
    });
  }

  it('rejects a frame larger than the limit before buffering it', () => {
    expect(() => new FrameDecoder(100).push(Buffer.from('101#'))).to.throw(FramingError);
  });

  it('detects garbage without a # as soon as it is not digits', () => {
    expect(() => new FrameDecoder().push(Buffer.from('GET / HTTP/1.1\r\n'))).to.throw(FramingError);
  });
});
