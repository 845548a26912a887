// Speech is played as espeak-ng makes it (media-engine/tts/streamed-speech.ts): a talk's first audio
// leaves with the first frames synthesized, not after the whole text went through espeak-ng and sox
// into a file. A far end on loopback UDP hears the RTP; the whole synthesis of the same text is timed
// beside it with the pipeline a file prompt takes.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import path from 'node:path';
import type { Endpoint, MediaServer } from '../../media-engine';
import { pcmuOffer, rejection, sleep, useMediaServer } from '../../testkit/media-engine/support';

const WORDS = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey yankee zulu'.split(' ');

/** A text of this run only (the TTS cache has never seen it). */
function freshText(words: number): string {
  const w: string[] = [];
  for (let i = 0; i < words; i++) w.push(WORDS[Math.floor(Math.random() * WORDS.length)]!);
  return `Hello, ${w.join(' ')}.`;
}

function ulaw(u: number): number {
  const x = ~u & 0xff;
  const e = (x >> 4) & 7;
  const s = ((((x & 0x0f) << 3) + 0x84) << e) - 0x84;
  return x & 0x80 ? -s : s;
}

/** The far end: the arrival time (epoch ms) of each RTP packet and its mean level. */
class FarEnd {
  readonly sock = dgram.createSocket('udp4');
  readonly heard: { at: number; level: number }[] = [];

  static async open(): Promise<FarEnd> {
    const f = new FarEnd();
    await new Promise<void>((r) => f.sock.bind(0, '127.0.0.1', r));
    f.sock.on('message', (b) => {
      if (b.length <= 12) return;
      let sum = 0;
      for (let i = 12; i < b.length; i++) sum += Math.abs(ulaw(b[i]!));
      f.heard.push({ at: Date.now(), level: sum / (b.length - 12) });
    });
    return f;
  }

  get port(): number {
    return this.sock.address().port;
  }

  /** When the first voiced packet (level > 300) arrived. */
  async firstVoiced(timeoutMs: number): Promise<number> {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      const hit = this.heard.find((h) => h.level > 300);
      if (hit) return hit.at;
      await sleep(5);
    }
    throw new Error(`no voiced packet within ${timeoutMs} ms`);
  }

  close(): void {
    this.sock.close();
  }
}

/** The whole synthesis of `text` as a file prompt makes it (espeak-ng | sox → 8 kHz WAV), ms. */
function fileSynthesisMs(text: string, out: string): Promise<number> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const child = execFile('bash', ['-c', `espeak-ng -v en-us -s 165 --stdout --stdin | sox -V1 -t wav - -r 8000 -b 16 -c 1 -e signed-integer -t wav "${out}"`], (err) =>
      err ? reject(err) : resolve(Date.now() - t0),
    );
    child.stdin!.end(text);
  });
}

describe('media-engine: speech streamed as it is synthesized', function () {
  this.timeout(60_000);
  let ms: MediaServer;
  let dir: string;
  useMediaServer({ ports: 40, workers: 1, cache: true }, (f) => ({ ms, dir } = f));

  async function endpointTo(far: FarEnd): Promise<Endpoint> {
    return ms.createEndpoint({ remoteSdp: pcmuOffer(far.port) });
  }

  const cachedPrompts = () => fs.readdirSync(path.join(dir, 'cache', 'tts')).filter((f) => f.endsWith('.wav'));

  it("a long text's first voiced packet leaves long before its whole synthesis could end; a stopped one is not cached", async () => {
    const text = freshText(600);
    const whole = await fileSynthesisMs(text, path.join(dir, 'whole.wav'));
    const far = await FarEnd.open();
    const ep = await endpointTo(far);
    try {
      // the pool's first process for this voice starts cold: warm it as a first say would
      await ep.say('Warm up.', { language: 'en-US' });
      const before = cachedPrompts().length;
      far.heard.length = 0;
      const t0 = Date.now();
      const playing = ep.say(text, { language: 'en-US' });
      const first = await far.firstVoiced(10_000);
      await ep.stopPlayback();
      const r = await playing;
      const s = r.synthesized![0]!;
      expect(s.cached).to.equal(false);
      expect(r.interrupted).to.equal(true);
      // espeak-ng alone makes ~220 s of speech for these 600 words in ~0.3-1 s; the first audio is ~50 ms
      expect(first - t0, `first voiced after ${first - t0} ms; the whole text takes ${whole} ms`).to.be.lessThan(whole / 2);
      expect(s.firstAudioAt! - s.startedAt).to.be.lessThan(whole / 2);
      await sleep(200);
      expect(cachedPrompts().length, 'a stopped synthesis is not cached').to.equal(before);
    } finally {
      await ep.destroy();
      far.close();
    }
  });

  it('a text spoken to its end is cached: the second say plays the same length from the cache', async () => {
    const far = await FarEnd.open();
    const ep = await endpointTo(far);
    try {
      const text = freshText(6);
      const a = await ep.say(text, { language: 'en-US' });
      const b = await ep.say(text, { language: 'en-US' });
      expect(a.synthesized![0]!.cached).to.equal(false);
      expect(b.synthesized![0]!.cached).to.equal(true);
      expect(a.playbackMilliseconds).to.be.greaterThan(500);
      expect(Math.abs(a.playbackMilliseconds - b.playbackMilliseconds)).to.be.at.most(20);
      expect(far.heard.filter((h) => h.level > 300).length).to.be.greaterThan(20);
    } finally {
      await ep.destroy();
      far.close();
    }
  });

  it('bad input: an unknown language and a bad voice are refused with their code; the leg speaks on', async () => {
    const far = await FarEnd.open();
    const ep = await endpointTo(far);
    try {
      const lang = await rejection(ep.say('Hello there', { language: 'xx-QQ' }));
      expect((lang as Error & { code?: string }).code).to.equal('UNSUPPORTED_LANGUAGE');
      const voice = await rejection(ep.say('Hello there', { voice: 'en;rm -rf' }));
      expect((voice as Error & { code?: string }).code).to.equal('SYNTHESIS_FAILED');
      const ok = await ep.say(freshText(4), { language: 'en-US' });
      expect(ok.playbackMilliseconds).to.be.greaterThan(300);
    } finally {
      await ep.destroy();
      far.close();
    }
  });
});
