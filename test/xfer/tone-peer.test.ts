// TonePeer (support.ts), the RTP party of the transfer and bridge tests: it must answer its leg, the
// platform's RTP port, and hear only it. Its port is an ephemeral one, which the kernel hands out again
// while an earlier test's TonePeer (open until its suite ends) still sends its tone there; answering
// whoever spoke first left the leg unheard (CI: bridge.test.ts "timeout waiting for C hears A").
import dgram from 'node:dgram';
import { expect } from 'chai';
import { muLaw } from '../../core/audio/g711';
import { until } from '../../testkit/media-app/harness';
import { TonePeer } from './support';

/** An RTP packet of 20 ms PCMU at `level` (a 1 kHz tone; 0: silence) under `ssrc`. */
function pcmu(ssrc: number, seq: number, level: number): Buffer {
  const p = Buffer.alloc(172);
  p[0] = 0x80;
  p.writeUInt16BE(seq & 0xffff, 2);
  p.writeUInt32BE((seq * 160) >>> 0, 4);
  p.writeUInt32BE(ssrc >>> 0, 8);
  for (let i = 0; i < 160; i++) p[12 + i] = muLaw.encodeSample(Math.round(level * Math.sin((2 * Math.PI * 1000 * i) / 8000)));
  return p;
}

async function udp(): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  s.on('error', () => undefined);
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  return s;
}

const send = (s: dgram.Socket, pkt: Buffer, port: number) => new Promise<void>((r, j) => s.send(pkt, port, '127.0.0.1', (e) => (e ? j(e) : r())));

describe('TonePeer', () => {
  const closing: { close(): void }[] = [];
  afterEach(() => {
    for (const c of closing.splice(0)) c.close();
  });

  it('answers its leg, not an earlier TonePeer still sending its tone to the same port, and counts only what the leg sends', async () => {
    const tone = await TonePeer.open();
    const [stale, leg] = [await udp(), await udp()];
    closing.push(tone, stale, leg);
    let fromTone = 0;
    leg.on('message', (_b, from) => {
      if (from.port === tone.port) fromTone++;
    });
    // the stale tone arrives first (loopback queues it before the leg's first packet is sent)
    await send(stale, pcmu(0x1234abcd, 1, 9000), tone.port);
    // the leg: silence every 20 ms, as the platform's leg of a party bridged to nobody
    let seq = 100;
    const legTimer = setInterval(() => void send(leg, pcmu(0x5eed5eed, seq++, 0), tone.port).catch(() => undefined), 20);
    closing.push({ close: () => clearInterval(legTimer) });
    await until(() => fromTone > 10, 5000, 'the leg hears the tone');
    // more of the stale tone: never counted as heard
    for (let k = 2; k < 12; k++) await send(stale, pcmu(0x1234abcd, k, 9000), tone.port);
    await until(() => tone.received > 20, 5000, 'the leg heard');
    expect(tone.voiced, 'the leg sends silence; the stale tone is not heard').to.equal(0);
  });
});
