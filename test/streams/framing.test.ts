// The three encapsulations' framing and the stream state machine, on their own.
import { expect } from 'chai';
import { AudioSocketDecoder, StreamProtocolError, audioSocketMessage, createDecoder, createEncoder, rtpPayload, AS_AUDIO, AS_UUID } from '../../core/streams/framing';
import { encapsulationProblem } from '../../core/streams/encapsulation';
import { StreamStateMachine } from '../../core/streams/state';

const pcm = (v: number) => Buffer.alloc(320, v);
const ID = '0436430c-2b02-624c-2032-570501212b57';

describe('media streams: framing', () => {
  it('rtp: version 2, PT 96, sequence +1 and timestamp +160 per chunk, one SSRC; the payload comes back', () => {
    const e = createEncoder('rtp', ID);
    expect(e.opening()).to.deep.equal([]);
    const a = e.frame(pcm(1));
    const b = e.frame(pcm(2));
    expect(a.length).to.equal(332);
    expect(a[0]).to.equal(0x80);
    expect(a[1]).to.equal(96);
    expect(b.readUInt16BE(2)).to.equal((a.readUInt16BE(2) + 1) & 0xffff);
    expect((b.readUInt32BE(4) - a.readUInt32BE(4)) >>> 0).to.equal(160);
    expect(b.readUInt32BE(8)).to.equal(a.readUInt32BE(8));
    expect(createDecoder('rtp').push(b)).to.deep.equal([{ kind: 'audio', pcm: pcm(2) }]);
    expect(e.hangup()).to.equal(null);
  });

  it('rtp decoding skips CSRCs, a header extension and padding; refuses what is not RTP', () => {
    const h = Buffer.from([0x80 | 0x20 | 0x10 | 1, 96, 0, 1, 0, 0, 0, 160, 0, 0, 0, 9]);
    const csrc = Buffer.alloc(4);
    const ext = Buffer.from([0xbe, 0xde, 0, 1, 1, 2, 3, 4]);
    const pad = Buffer.from([0, 0, 3]);
    expect(rtpPayload(Buffer.concat([h, csrc, ext, pcm(7), pad]))).to.deep.equal(pcm(7));
    expect(() => rtpPayload(Buffer.alloc(8))).to.throw(StreamProtocolError);
    expect(() => rtpPayload(Buffer.concat([Buffer.from([0x40]), Buffer.alloc(20)]))).to.throw(StreamProtocolError);
  });

  it('sln is the bare 320 bytes', () => {
    const e = createEncoder('sln', ID);
    expect(e.frame(pcm(3))).to.deep.equal(pcm(3));
    expect(createDecoder('sln').push(pcm(4))).to.deep.equal([{ kind: 'audio', pcm: pcm(4) }]);
  });

  it('audiosocket: UUID first, 0x10 audio with a big-endian length, 0x00 hangup', () => {
    const e = createEncoder('audiosocket', ID);
    const [open] = e.opening();
    expect([...open!.subarray(0, 3)]).to.deep.equal([AS_UUID, 0, 16]);
    expect(open!.subarray(3).toString('hex')).to.equal(ID.replace(/-/g, ''));
    const f = e.frame(pcm(5));
    expect([...f.subarray(0, 3)]).to.deep.equal([AS_AUDIO, 1, 64]);
    expect(f.length).to.equal(323);
    expect([...e.hangup()!]).to.deep.equal([0, 0, 0]);
  });

  it('audiosocket decoding takes several messages in one frame, or one split across frames; refuses unknown types', () => {
    const d = new AudioSocketDecoder();
    const two = Buffer.concat([audioSocketMessage(AS_AUDIO, pcm(1)), audioSocketMessage(AS_UUID, Buffer.from(ID.replace(/-/g, ''), 'hex')), audioSocketMessage(0x03, Buffer.from('5'))]);
    expect(d.push(two)).to.deep.equal([
      { kind: 'audio', pcm: pcm(1) },
      { kind: 'uuid', id: ID },
      { kind: 'dtmf', digit: '5' },
    ]);
    const m = audioSocketMessage(AS_AUDIO, pcm(2));
    expect(d.push(m.subarray(0, 100))).to.deep.equal([]);
    expect(d.push(m.subarray(100))).to.deep.equal([{ kind: 'audio', pcm: pcm(2) }]);
    expect(d.push(Buffer.from([0xff, 0, 1, 2]))).to.deep.equal([{ kind: 'error', code: 2 }]);
    expect(d.push(Buffer.from([0, 0, 0]))).to.deep.equal([{ kind: 'hangup' }]);
    expect(() => new AudioSocketDecoder().push(Buffer.from([0x42, 0, 0]))).to.throw(StreamProtocolError, /0x42/);
    expect(() => new AudioSocketDecoder().push(Buffer.from([AS_UUID, 0, 2, 1, 2]))).to.throw(StreamProtocolError);
  });

  it('encapsulation problems are said in words', () => {
    expect(encapsulationProblem(undefined)).to.match(/required/);
    expect(encapsulationProblem('opus')).to.match(/unknown encapsulation "opus"/);
    expect(encapsulationProblem('sln')).to.equal(null);
  });

  it('the state machine only moves along connecting → open → streaming → closing → closed', () => {
    const m = new StreamStateMachine();
    const seen: string[] = [];
    m.on('state', (s: string) => seen.push(s));
    expect(m.to('streaming')).to.equal(false);
    expect(m.to('open')).to.equal(true);
    expect(m.to('streaming')).to.equal(true);
    expect(m.to('open')).to.equal(false);
    expect(m.to('closing')).to.equal(true);
    expect(m.to('closed')).to.equal(true);
    expect(m.to('open')).to.equal(false);
    expect(seen).to.deep.equal(['open', 'streaming', 'closing', 'closed']);
  });
});
