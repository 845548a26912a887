import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { type MediaServer, type DtmfEvent, type Endpoint } from '../../media-engine';
import { ArrivalWaits } from '../../testkit/arrival-waits';
import { freePort } from '../../testkit/ports';
import { bestCorrelation, readWav, rejection, rms, sleep, speechWav, useMediaServer } from '../../testkit/media-engine/support';

/**
 * The digits `ep` reports from now on: `all` resolves once `n` have come, `until(k)` once k have (each
 * bounded at 10 s, naming what did not come), the digit being the event to wait on rather than a sleep
 * as long as the digits.
 */
function digitsOf(ep: Endpoint, n: number): { events: DtmfEvent[]; readonly all: Promise<void>; until: (k: number) => Promise<void> } {
  const events: DtmfEvent[] = [];
  const waits = new ArrivalWaits();
  ep.on('dtmf', (e: DtmfEvent) => {
    events.push(e);
    waits.check();
  });
  const until = (k: number) => waits.until(() => events.length >= k, 10_000, `${k} digits reported`);
  return {
    events,
    get all() {
      return until(n);
    },
    until,
  };
}

describe('media-engine endpoints over loopback UDP', function () {
  this.timeout(30000);
  let ms: MediaServer;
  let dir: string;
  let speech: string;

  useMediaServer({ ports: 400, workers: 2, speech: 'Hello, this is a test of the media engine. One two three.' }, (f) => ({ ms, dir, speech } = f));

  /** A makes the offer, B answers from it (on the same worker when near is given). */
  async function pair(opts: { inbandDtmf?: boolean } = {}): Promise<[Endpoint, Endpoint]> {
    const a = await ms.createEndpoint();
    const b = await ms.createEndpoint({ remoteSdp: a.local.sdp, inbandDtmf: opts.inbandDtmf });
    await a.modify(b.local.sdp);
    return [a, b];
  }

  it('plays a WAV on A and B records it: length and content match', async () => {
    const [a, b] = await pair();
    const ref = readWav(speech).samples;
    const refSeconds = ref.length / 8000;
    // B's recorder is armed before A plays (A and B may be on two workers: nothing else orders them)
    const rec = await b.startRecord(path.join(dir, 'b.wav'), { duration: Math.ceil(refSeconds + 1) });
    expect(rec.rate).to.equal(8000);
    const played = await a.play(speech);
    expect(played.playbackMilliseconds).to.be.closeTo(refSeconds * 1000, 25);
    const r = await rec.done;
    expect(r.reason).to.equal('duration');
    const got = readWav(r.path);
    expect(got.rate).to.equal(8000);
    expect(got.samples.length / 8000).to.be.closeTo(Math.ceil(refSeconds + 1), 0.05);
    const { corr, lag } = bestCorrelation(ref, got.samples);
    expect(corr, 'correlation after G.711 and the network').to.be.greaterThan(0.9);
    expect(lag).to.be.within(0, 4000); // under half a second of latency
    expect(r.files[0].peaks.length).to.be.greaterThan(10);
    expect(Math.max(...r.files[0].peaks)).to.be.within(0.05, 1);
    await a.destroy();
    await b.destroy();
  });

  it('startRecord resolves once armed, its done as record(); refused on a destroyed endpoint; settles when its endpoint goes', async () => {
    const [a, b] = await pair();
    const rec = await b.startRecord(path.join(dir, 'armed.wav'));
    expect([rec.path, rec.rate]).to.deep.equal([path.join(dir, 'armed.wav'), 8000]);
    await b.stopRecord(rec.path);
    expect((await rec.done).reason).to.equal('stopped');
    // armed, then the endpoint goes: done still settles (hangup)
    const late = await a.startRecord(path.join(dir, 'gone.wav'));
    await a.destroy();
    expect((await late.done).reason).to.equal('hangup');
    expect((await rejection(a.startRecord(path.join(dir, 'x.wav')))).message).to.match(/destroyed/);
    expect((await rejection(b.startRecord(''))).message).to.match(/needs a path/);
    await b.destroy();
  });

  it('sends RFC 4733 DTMF from A and B reports each digit once, in order', async () => {
    const [a, b] = await pair();
    const got = digitsOf(b, 16);
    await a.sendDtmf('1234567890*#ABCD', 80);
    await got.all;
    // a late duplicate of the last digit (its end packet is sent three times) would come before a digit
    // sent after it: one more, then exactly the 17 sent
    await a.sendDtmf('5', 80);
    await got.until(17);
    expect(got.events.map((e) => e.dtmf).join('')).to.equal('1234567890*#ABCD5');
    expect(got.events.every((e) => e.source === 'rfc2833' && e.duration === 80)).to.equal(true);
    expect((await rejection(a.sendDtmf('12x'))).message).to.match(/invalid DTMF/);
    await a.destroy();
    await b.destroy();
  });

  it('bounds the digits waiting on a leg: EBUSY past maxWaiting (telephone-events and tones), taken again once sent', async () => {
    const [a, b] = await pair();
    await a.sendDtmf('12345', 40, 'rfc4733', 5);
    expect(((await rejection(a.sendDtmf('6789', 40, 'rfc4733', 5))) as Error & { code?: string }).code).to.equal('EBUSY');
    expect((await rejection(a.sendDtmf('1'.repeat(129), 40))).message).to.match(/more than 128/);
    await a.sendDtmf('1111', 40, 'inband', 5);
    expect(((await rejection(a.sendDtmf('12', 40, 'inband', 5))) as Error & { code?: string }).code).to.equal('EBUSY');
    await sleep(2000);
    await a.sendDtmf('6789', 40, 'rfc4733', 5);
    await a.sendDtmf('12', 40, 'inband', 5);
    await a.destroy();
    await b.destroy();
  });

  it('detects in-band DTMF tones in the audio', async () => {
    const [a, b] = await pair({ inbandDtmf: true });
    const tones = digitsOf(b, 4);
    await a.play('tone_stream://dtmf:159#');
    await tones.all;
    expect(tones.events.map((e) => e.dtmf).join('')).to.equal('159#');
    expect(tones.events.every((e) => e.source === 'inband')).to.equal(true);
    // speech must not produce digits (talk-off)
    const got = digitsOf(b, 1).events;
    await a.play(speech);
    await sleep(200);
    expect(got).to.deep.equal([]);
    await a.destroy();
    await b.destroy();
  });

  it('recorder stops on end_of_key, end_of_silence and duration', async () => {
    const [a, b] = await pair();
    const byKey = b.record(path.join(dir, 'key.wav'), { end_of_key: '#' });
    a.play(speech).catch(() => {});
    await sleep(600);
    await a.sendDtmf('5#');
    const k = await byKey;
    expect(k.reason).to.equal('end_of_key');
    expect(k.terminatorUsed).to.equal('#');
    await a.stopPlayback();
    await sleep(100);
    const t0 = Date.now();
    const bySilence = await b.record(path.join(dir, 'sil.wav'), { end_of_silence: 1 });
    expect(bySilence.reason).to.equal('end_of_silence');
    expect(Date.now() - t0).to.be.within(900, 2000);
    const byDuration = await b.record(path.join(dir, 'dur.wav'), { duration: 1 });
    expect(byDuration.reason).to.equal('duration');
    expect(readWav(byDuration.path).samples.length).to.equal(8000);
    await a.destroy();
    await b.destroy();
  });

  it('writes separate in/out files and keeps a valid file when the endpoint is destroyed mid-recording', async () => {
    const [a, b] = await pair();
    const file = path.join(dir, 'cut.wav');
    const rec = b.record(file, { separate: true });
    a.play(speech).catch(() => {});
    b.play('tone_stream://ringback').catch(() => {});
    await sleep(1600);
    await b.destroy();
    const r = await rec;
    expect(r.reason).to.equal('hangup');
    for (const f of [file, file.replace('.wav', '-in.wav'), file.replace('.wav', '-out.wav')]) {
      const w = readWav(f);
      expect(w.dataBytes + 44).to.equal(w.fileBytes);
      expect(w.samples.length / 8000).to.be.within(1.3, 2.2);
    }
    expect(r.files.map((f) => f.direction)).to.deep.equal(['', 'in', 'out']);
    const inside = readWav(file.replace('.wav', '-in.wav')).samples;
    const outside = readWav(file.replace('.wav', '-out.wav')).samples;
    expect(rms(inside)).to.be.greaterThan(300); // the speech from A
    expect(rms(outside)).to.be.greaterThan(300); // the ringback B played
    expect((await rejection(b.play(speech))).message).to.match(/destroyed/);
    await a.destroy();
  });

  it('plays and collects digits with barge-in and a terminator', async () => {
    const [a, b] = await pair();
    const collecting = b.playCollect({ file: speech, min: 1, max: 6, terminators: '#', timeout: 3000, digitTimeout: 2000 });
    await sleep(500);
    await a.sendDtmf('42#', 80);
    const r = await collecting;
    expect(r.digits).to.equal('42');
    expect(r.terminatorUsed).to.equal('#');
    expect(r.playbackMilliseconds!).to.be.lessThan(1500); // barge-in stopped the prompt
    const none = await b.playCollect({ file: 'silence_stream://100', min: 1, timeout: 300 });
    expect(none.digits).to.equal('');
    await a.destroy();
    await b.destroy();
  });

  it('rejects a missing file and bad SDP, and releases the port', async () => {
    const before = ms.ports.allocated;
    expect((await rejection(ms.createEndpoint({ remoteSdp: 'v=0\r\nc=IN IP4 1.2.3.4\r\nm=audio 1 RTP/AVP 18\r\n' }))).message).to.match(/no common codec/);
    expect((await rejection(ms.createEndpoint({ remoteSdp: 'garbage' }))).message).to.match(/SDP/);
    expect(ms.ports.allocated).to.equal(before);
    const [a, b] = await pair();
    expect((await rejection(a.play(path.join(dir, 'nope.wav')))).message).to.match(/File Not Found/);
    expect((await rejection(a.play([]))).message).to.match(/nothing to play/);
    await a.destroy();
    await b.destroy();
    expect(ms.ports.allocated).to.equal(before);
  });
});

describe('media-engine sources: TTS, MP3 and http(s) URLs', function () {
  this.timeout(30000);
  let ms: MediaServer;
  let dir: string;

  // the URL below is served on loopback: this engine opts in to it (EGRESS_ALLOW_CIDRS)
  useMediaServer({ ports: 100, workers: 1, cache: true, egress: { allowCidrs: ['127.0.0.0/8'], dnsServers: [], selfHosts: [] } }, (f) => ({ ms, dir } = f));

  it('says text through espeak-ng, plays an MP3 and a WAV served over http', async () => {
    const a = await ms.createEndpoint();
    const b = await ms.createEndpoint({ remoteSdp: a.local.sdp });
    await a.modify(b.local.sdp);
    const rec = b.record(path.join(dir, 'said.wav'), { separate: true });
    const said = await a.say('Welcome to the platform', { language: 'en-US' });
    expect(said.playbackMilliseconds).to.be.within(700, 4000);
    await b.stopRecord();
    expect(rms(readWav((await rec).files[1].path).samples)).to.be.greaterThan(300);
    expect((await rejection(a.say(''))).message).to.match(/needs text/);

    const wav = path.join(dir, 'w.wav');
    speechWav(wav, 'A file served over HTTP');
    const seconds = readWav(wav).samples.length / 8000;
    const mp3 = path.join(dir, 'w.mp3');
    execFileSync('sox', [wav, mp3]);
    const fromMp3 = await a.play(mp3);
    expect(fromMp3.playbackMilliseconds / 1000).to.be.closeTo(seconds, 0.15);

    const port = await freePort();
    const server = http.createServer((req, res) => {
      if (req.url === '/w.wav') {
        res.writeHead(200, { 'content-type': 'audio/wav' });
        res.end(fs.readFileSync(wav));
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
    try {
      const fromUrl = await a.play(`http://127.0.0.1:${port}/w.wav`);
      expect(fromUrl.playbackMilliseconds / 1000).to.be.closeTo(seconds, 0.05);
      const missing = await rejection(a.play(`http://127.0.0.1:${port}/missing.wav`));
      // the server's answer (404) is not told; a generic reason is
      expect(missing.message)
        .to.match(/could not be fetched/)
        .and.not.to.match(/\b404\b/); // word-bounded: the URL's random port may hold the digits
    } finally {
      server.close();
    }
    await a.destroy();
    await b.destroy();
  });
});
