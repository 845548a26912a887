// The caller's background audio (issue 56, docs/evals.md "Background audio"). Over real RTP on
// loopback: a socket stands for the platform, receives what a simulated caller's phone sends and
// measures it between utterances: noise (white, pink) and babble at their RMS level, the pink one
// with its low-frequency tilt; an echo is the audio the "platform" sent, back at the gain after the
// delay. The speakerphone caller against ai_talk over SIP: speakerphone.test.ts.
import { expect } from 'chai';
import dgram from 'node:dgram';
import { spawn } from 'node:child_process';
import { encodeG711, G711_TABLES, PT_PCMU } from '../../core/audio/g711';
import { sleep, until } from '../../testkit/media-app/harness';
import { RtpPhone } from '../../evals/rtp-phone';
import { attachBackground, prepareBackground } from '../../evals/background';
import { speak } from '../../evals/speech';
import { evalBackgroundSchema } from '../../core/evals/schema';

const dbfs = (x: Int16Array | number[]) => {
  let s = 0;
  for (const v of x) s += v * v;
  return 10 * Math.log10(s / x.length / 32768 ** 2);
};

interface Got {
  at: number;
  pcm: Int16Array;
}

/** A UDP socket standing for the platform: what the phone sends, decoded, timed on arrival. */
async function platformSocket(): Promise<{ sock: dgram.Socket; port: number; got: Got[] }> {
  const sock = dgram.createSocket('udp4');
  sock.on('error', () => undefined);
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  const got: Got[] = [];
  sock.on('message', (b) => {
    if ((b[1]! & 0x7f) !== PT_PCMU) return;
    const payload = b.subarray(12);
    got.push({ at: performance.now(), pcm: Int16Array.from(payload, (x) => G711_TABLES.muDecode[x]!) });
  });
  return { sock, port: (sock.address() as { port: number }).port, got };
}

const packetsUntil = (got: Got[], n: number) => until(async () => (got.length >= n ? true : null), 10_000, `${n} packets`);
const joined = (g: Got[]) => g.flatMap((p) => [...p.pcm]);
/** Packet i of a 1 kHz tone at -10 dBFS. */
const tone = (i: number) => Int16Array.from({ length: 160 }, (_, k) => Math.round(32768 * 10 ** (-10 / 20) * Math.SQRT2 * Math.sin((2 * Math.PI * 1000 * (i * 160 + k)) / 8000)));
/** Packet `i` of the tone: PCMU, 20 ms, sequence number `i`. */
function tonePacket(i: number): Buffer {
  const h = Buffer.alloc(12);
  h[0] = 0x80;
  h[1] = PT_PCMU;
  h.writeUInt16BE(i, 2);
  h.writeUInt32BE(i * 160, 4);
  return Buffer.concat([h, Buffer.from(encodeG711('PCMU', tone(i)))]);
}

describe('evals background audio: what the caller sends has the mix', function () {
  this.timeout(30_000);

  /** The phone sending with `background` for 1 s, an utterance, then 1 s more: the levels before and after the utterance. */
  async function between(background: unknown): Promise<{ before: number[]; after: number[] }> {
    const p = await platformSocket();
    const phone = await RtpPhone.open('127.0.0.1');
    try {
      const b = evalBackgroundSchema.parse(background);
      attachBackground(phone, await prepareBackground(b, 'en-US'));
      // counted as they go: when the utterance's last packet went, the socket may not have read it yet
      // (a loaded loop), so what it has read then is no place to start the "after" from
      let sent = 0;
      phone.onSent((x) => {
        if ('pcm' in x) sent++; // (a digit's slot sends event packets, which the socket leaves out)
      });
      phone.start({ host: '127.0.0.1', port: p.port });
      await packetsUntil(p.got, 50);
      const before = joined(p.got.slice(0, 50));
      await phone.say(await speak('What are your opening hours?', 'en-US'));
      const from = sent;
      await packetsUntil(p.got, from + 50);
      return { before, after: joined(p.got.slice(from, from + 50)) };
    } finally {
      phone.close();
      p.sock.close();
    }
  }

  /** Energy of the first difference over the signal's: about 2 for white noise, well under 1 for pink. */
  const tilt = (x: number[]) => {
    let d = 0;
    let s = 0;
    for (let i = 1; i < x.length; i++) {
      d += (x[i]! - x[i - 1]!) ** 2;
      s += x[i]! ** 2;
    }
    return d / s;
  };

  it('noise: white and pink at their RMS level between utterances, pink tilted to the low end; none: silence', async () => {
    const white = await between({ type: 'noise', color: 'white', level_db: -30 });
    const pink = await between({ type: 'noise', level_db: -40 });
    for (const [x, level] of [
      [white.before, -30],
      [white.after, -30],
      [pink.before, -40],
      [pink.after, -40],
    ] as const)
      expect(dbfs(x)).to.be.within(level - 1.5, level + 1.5);
    expect(tilt(white.before)).to.be.within(1.6, 2.4);
    expect(tilt(pink.before)).to.be.below(0.8);
    // no background: what a phone sends between utterances is digital silence
    const p = await platformSocket();
    const phone = await RtpPhone.open('127.0.0.1');
    phone.start({ host: '127.0.0.1', port: p.port });
    await packetsUntil(p.got, 20);
    phone.close();
    p.sock.close();
    expect(dbfs(joined(p.got.slice(0, 20)))).to.be.below(-70);
  });

  it('babble: several espeak-ng voices summed at the level, heard between the caller’s utterances', async () => {
    const { before, after } = await between({ type: 'babble', level_db: -30, voices: 4 });
    // a second of babble: its level near the loop's (voices pause), far above silence
    for (const x of [before, after]) expect(dbfs(x)).to.be.within(-35, -26);
  });

  it('echo: what the platform sends comes back at the gain after the delay', async () => {
    const p = await platformSocket();
    const phone = await RtpPhone.open('127.0.0.1');
    let stop = async () => undefined;
    try {
      attachBackground(phone, await prepareBackground(evalBackgroundSchema.parse({ type: 'echo', gain_db: -20, delay_ms: 60 }), 'en-US'));
      phone.start({ host: '127.0.0.1', port: p.port });
      await packetsUntil(p.got, 10);
      // the "platform" sends 1 s of a 1 kHz tone at -10 dBFS, a packet every 20 ms on its own clock: after
      // a stall of this process (120 ms, here at packet 10) it sends what fell due at once, as the media
      // engine's clock does, rather than from then on as late as the stall (a timer that runs from the
      // last fire); the few packets more than the delay late when read are left out of the echo
      const startedAt = performance.now();
      /** how late (ms) each packet went, after its place on the sender's clock */
      const sentLate: number[] = [];
      let stopped = false;
      const sending = (async () => {
        for (let i = 0; i < 50 && !stopped; i++) {
          if (i === 10) {
            const end = performance.now() + 120;
            while (performance.now() < end);
          }
          p.sock.send(tonePacket(i), phone.port, '127.0.0.1');
          sentLate.push(performance.now() - (startedAt + i * 20));
          await sleep(startedAt + (i + 1) * 20 - performance.now());
        }
      })();
      stop = async () => {
        stopped = true;
        await sending;
      };
      const from = p.got.length;
      await packetsUntil(p.got, from + 80);
      const sent = p.got.slice(from);
      const onset = sent.find((g) => dbfs(g.pcm) > -45)!;
      expect(onset, 'the echo was heard').to.not.equal(undefined);
      expect(onset.at - startedAt).to.be.within(40, 160);
      const echoed = sent.filter((g) => dbfs(g.pcm) > -45);
      // all 50 but those sent too late to be echoed at the delay (the stall's, and any a loaded machine
      // adds: more than 40 ms late, some of the packet is), give or take a frame at each end
      const tooLate = sentLate.filter((l) => l > 40).length;
      expect(echoed.length, `frames echoed; ${tooLate} packets sent more than 40 ms late`).to.be.within(48 - tooLate, 52);
      expect(dbfs(joined(echoed.slice(2, -2)))).to.be.within(-31.5, -28.5);
    } finally {
      await stop();
      phone.close();
      p.sock.close();
    }
  });

  it('echo: a stall of the phone’s event loop leaves no hole in it (what came meanwhile is read before the frames that echo it go)', async () => {
    const p = await platformSocket();
    const phone = await RtpPhone.open('127.0.0.1');
    // another process stands for the platform, so its packets keep coming while this one stalls: 1 s of the tone
    const packets = Array.from({ length: 50 }, (_, i) => tonePacket(i).toString('hex'));
    const sender = spawn(process.execPath, ['-e', SENDER, String(phone.port)], { stdio: ['pipe', 'ignore', 'ignore'] });
    sender.on('error', () => undefined);
    sender.stdin.on('error', () => undefined);
    try {
      attachBackground(phone, await prepareBackground(evalBackgroundSchema.parse({ type: 'echo', gain_db: -20, delay_ms: 60 }), 'en-US'));
      phone.start({ host: '127.0.0.1', port: p.port });
      await packetsUntil(p.got, 10);
      const from = p.got.length;
      sender.stdin.end(packets.join('\n'));
      await until(async () => (p.got.slice(from).some((g) => dbfs(g.pcm) > -45) ? true : null), 10_000, 'the echo');
      // 300 ms in which this process runs nothing: the phone's timer and its socket both wait
      const stallEnd = performance.now() + 300;
      while (performance.now() < stallEnd);
      // from the echo's first frame: the tone's 50 frames and some after (however late the sender started)
      const onset = from + p.got.slice(from).findIndex((g) => dbfs(g.pcm) > -45);
      await packetsUntil(p.got, onset + 60);
      const echoed = p.got.slice(onset, onset + 60).filter((g) => dbfs(g.pcm) > -45);
      expect(echoed.length, 'frames with the echo in them').to.be.within(47, 52);
    } finally {
      sender.kill();
      phone.close();
      p.sock.close();
    }
  });
});

/** The stand-in platform's sender: the hex packets on stdin to 127.0.0.1:argv[1], one every 20 ms on its own clock. */
const SENDER = `const d = require('node:dgram').createSocket('udp4');
let s = '';
process.stdin.on('data', (c) => (s += c)).on('end', () => {
  const ps = s.split('\\n').map((h) => Buffer.from(h, 'hex'));
  const t0 = performance.now();
  let i = 0;
  const next = () => {
    if (i >= ps.length) return d.close();
    d.send(ps[i++], Number(process.argv[1]), '127.0.0.1');
    setTimeout(next, Math.max(0, t0 + i * 20 - performance.now()));
  };
  next();
});`;
