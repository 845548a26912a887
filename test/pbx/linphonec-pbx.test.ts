// linphonec (Debian's 5.1, liblinphone) as a PBX desk phone, provisioned from its QR URL: it calls a
// number whose flow runs `voicemail` on its own extension's box, plays a 700 Hz tone as its message
// and ends it with the # key (RFC 4733 from linphonec's keypad); the message lamp reaches it as an
// unsolicited message-summary NOTIFY (liblinphone 5.1 has no message-summary subscription, so the
// extension is set for unsolicited MWI; the NOTIFY is read from linphonec's SIP log); then it dials
// *97, keys its PIN and 1, and hears its own tone played back. It also parks a call (blind transfer
// to the lot 700) and retrieves it from the slot, each leg's tone checked.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { numberWithFlow } from '../../testkit/pbx/voicemail';
import { Linphonec } from '../edge/linphonec';
import { Baresip } from '../../testkit/baresip';
import { parkSlots } from '../../core/pbx/park-slots';
import { toneWav } from '../edge/audio';
import { readWav } from '../../media-engine/audio/wav';
import { toneShare } from '../../testkit/media-engine/far-end';
import { rms } from '../../testkit/media-engine/support';

/** Half-second windows of a WAV file (first channel) whose energy is mostly at `hz`. */
function toneWindows(file: string, hz: number): number {
  const { info, samples: all } = readWav(file);
  const rate = info.format.sampleRate;
  const ch = info.format.channels;
  const samples = ch === 1 ? all : all.filter((_, i) => i % ch === 0);
  const n = rate / 2;
  let windows = 0;
  // (a mean energy over 1e4: an RMS over 100)
  for (let start = 0; start + n <= samples.length; start += n) if (rms(samples, start, start + n) > 100 && toneShare(samples.subarray(start, start + n), hz, rate) > 0.5) windows++;
  return windows;
}

const HAVE_LINPHONEC = fs.existsSync('/usr/bin/linphonec');
const TONE = 700;

(HAVE_LINPHONEC ? describe : describe.skip)('pbx: linphonec as a desk phone (voicemail with keys, message lamp, *97)', function () {
  this.timeout(150_000);
  let p: Platform;
  let t: TestApp;
  let f: Fixture;
  let server: http.Server;
  let base = '';
  let dir = '';
  let phone: Linphonec | null = null;

  before(async () => {
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
    t = await buildTestApp({
      env: {
        RATE_LIMIT_SCALE: '0',
        REDIS_KEY_PREFIX: p.config.redisKeyPrefix,
        DATA_DIR: p.config.dataDir,
        SIP_ADVERTISED_HOST: '127.0.0.1',
        SIP_PORT: String(p.sipPort),
        SIP_DOMAIN: p.config.sipDomain,
      },
    });
    f = await createFixture(t.ctx);
    server = http.createServer(t.app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lp-pbx-'));
  });
  after(async () => {
    await phone?.dispose();
    server?.close();
    await t?.close();
    await p?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const api = (m: 'post' | 'get' | 'put', url: string) => request(t.app)[m](`/v1.0${url}`).query({ accesskey: f.accesskey });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('leaves a message with its tone and #, sees the lamp in a NOTIFY, reads it back with *97', async () => {
    const ext = (await api('post', '/extensions').send({ extension: '7301', password: 'secret-pass-7301' })).body;
    expect((await api('put', `/extensions/${ext.id}`).send({ mwi_unsolicited: true })).status).to.equal(200);
    const box = (await api('post', '/voicemail_boxes').send({ number: '7301', pin: '2468', extension_id: ext.id, greeting_text: 'Leave it.' })).body;
    expect(box.id, JSON.stringify(box)).to.be.a('string');
    const number = `+8991000073${process.pid % 90}`;
    await numberWithFlow(f.customer.id, number, [{ type: 'voicemail', option: { box_id: box.id, max_length: 30 } }, { type: 'hangup' }]);
    const tok = (await api('post', `/extensions/${ext.id}/provisioning-token`)).body;
    const l = await Linphonec.start(`${base}/provisioning/extension?token=${tok.token}&format=linphone`);
    phone = l;
    const tone = path.join(dir, 'tone.wav');
    toneWav(tone, TONE);
    const silence = path.join(dir, 'silence.wav');
    toneWav(silence, 0);
    const fail = (err: Error) => new Error(`${err.message}\n${l.log.slice(-3000)}`);
    try {
      await until(async () => (await p.app.registrar.bindings.get(`${ext.username}@${ext.domain_name}`)).length > 0 || null, 20_000, 'linphonec registered');
      l.send('soundcard use files');

      // leave the message: greeting and beep (about 3 s), then the tone, then #
      const placed = l.mark();
      l.send(`call sip:${number}@${ext.domain_name}`);
      await l.connected(15_000, placed).catch(() => {
        throw new Error('timeout waiting for the voicemail answers');
      });
      await sleep(4500);
      l.send(`play ${tone}`);
      await sleep(3000);
      l.send(`play ${silence}`);
      l.send('#');
      const m = await until(async () => (await t.ctx.db('voicemail_messages').where({ box_id: box.id }))[0], 20_000, 'the message stored');
      expect(m.duration_ms, 'ended by # after the tone, not by the length limit').to.be.within(1500, 15_000);
      await until(() => !/Call \d+ .*(connected|Connected)/.test(l.log.split(/Call \d+ .*(ended|terminated)/i).pop() ?? '') || null, 15_000, 'the call ends').catch(() => l.send('terminate'));

      // the lamp: the unsolicited NOTIFY with Messages-Waiting: yes reached linphonec (its SIP log)
      const lit = await until(
        () => /NOTIFY sip:[\s\S]*?Event: message-summary[\s\S]*?Messages-Waiting: yes[\s\S]*?Voice-Message: [^\r\n]*/i.exec(l.detailedLog())?.[0] ?? null,
        10_000,
        'the NOTIFY at linphonec',
      );
      expect(lit).to.include('Voice-Message: 1/0');

      // *97: PIN, then 1 plays the new message; linphonec records what it hears
      await sleep(1000);
      const heard = path.join(dir, 'heard.wav');
      const dialled = l.mark();
      l.send(`call sip:*97@${ext.domain_name}`);
      await l.connected(15_000, dialled);
      l.send(`record ${heard}`);
      await sleep(2500);
      for (const k of ['2', '4', '6', '8', '#']) {
        l.send(k);
        await sleep(300);
      }
      await sleep(4000); // "You have 1 new and 0 old messages." and the main menu
      l.send('1');
      await sleep(7000);
      l.send('terminate');
      await sleep(1000);
      expect(fs.existsSync(heard), 'linphonec recorded the call').to.equal(true);
      // the message was 3 s of the tone; the prompts before it hold none
      expect(toneWindows(heard, TONE), 'linphonec hears its own message played back (700 Hz, half-second windows)').to.be.at.least(3);
      const read = await until(async () => ((await t.ctx.db('voicemail_messages').where({ id: m.id }).first())?.folder === 'old' ? true : null), 10_000, 'the message heard moves to Old');
      expect(read).to.equal(true);
    } catch (err) {
      throw fail(err as Error);
    }
  });

  let parkAttempts = 0;
  it('parks a call by blind transfer to the lot and retrieves it from the slot; tones each way on the retrieved leg', async () => {
    // a retry (TEST_RETRIES; the split run gives none by default) starts on its own extensions and slot:
    // the first attempt's may still be taken
    const attempt = ++parkAttempts;
    const [ea, eb] = attempt === 1 ? ['7401', '7402'] : [`74${attempt}1`, `74${attempt}2`];
    const a = (await api('post', '/extensions').send({ extension: ea, password: `secret-pass-${ea}` })).body;
    const b = (await api('post', '/extensions').send({ extension: eb, password: `secret-pass-${eb}` })).body;
    const tok = (await api('post', `/extensions/${a.id}/provisioning-token`)).body;
    const wav = (hz: number) => {
      const file = path.join(dir, `park-${hz}.wav`);
      toneWav(file, hz);
      return file;
    };
    // none near the notes of the music on hold (523-1175 Hz)
    const [BEFORE, AFTER, PARKED] = [400, 2000, 1600];
    const bob = await Baresip.start({ user: b.username, domain: b.domain_name, password: `secret-pass-${eb}`, outboundProxy: `sip:127.0.0.1:${p.sipPort}` }, wav(PARKED));
    await phone?.dispose();
    const l = await Linphonec.start(`${base}/provisioning/extension?token=${tok.token}&format=linphone`);
    phone = l;
    try {
      await until(async () => (await p.app.registrar.bindings.get(`${a.username}@${a.domain_name}`)).length > 0 || null, 20_000, 'linphonec registered');
      await until(async () => (await p.app.registrar.bindings.get(`${b.username}@${b.domain_name}`)).length > 0 || null, 10_000, 'baresip registered');
      l.send('soundcard use files');
      const first = l.mark();
      l.send(`call sip:${b.extension}@${b.domain_name}`);
      await until(() => bob.saw('CALL_ESTABLISHED') || null, 15_000, 'baresip answers');
      await l.connected(15_000, first);
      l.send(`play ${wav(BEFORE)}`);
      await sleep(1500);
      // park: linphonec's blind transfer (REFER) of the call to the lot
      const slots = parkSlots(p.redis, p.config.redisKeyPrefix);
      const taken = new Set((await slots.list(f.customer.id)).map((e) => e.slot));
      l.send(`transfer sip:700@${a.domain_name}`);
      const parked = await until(async () => (await slots.list(f.customer.id)).find((e) => !taken.has(e.slot)) ?? null, 15_000, 'baresip parked');
      if (attempt === 1) expect(parked.slot).to.equal(701);
      await until(() => /Call 1 .*(ended|terminated)/i.test(l.log) || null, 15_000, "linphonec's first call released");
      await sleep(1000);

      // retrieve: dial the slot, talk with another tone
      const heard = path.join(dir, 'retrieved.wav');
      const second = l.mark();
      l.send(`call sip:${parked.slot}@${a.domain_name}`);
      await until(async () => ((await slots.list(f.customer.id)).some((e) => e.slot === parked.slot) ? null : true), 15_000, 'the slot is free (retrieved)');
      // the slot frees once the platform answered; linphonec's own call may not run its media yet
      await l.connected(15_000, second);
      l.send(`record ${heard}`);
      l.send(`play ${wav(AFTER)}`);
      await sleep(3500);
      l.send('terminate');
      await until(() => bob.saw('CALL_CLOSED') || null, 10_000, 'baresip sees the hang-up');
      await bob.stop();
      expect(toneWindows(heard, PARKED), 'linphonec hears the retrieved party (1600 Hz) on the slot call').to.be.at.least(3);
      expect(toneWindows(bob.heardWav, AFTER), 'the retrieved party hears linphonec on the slot call (2000 Hz)').to.be.at.least(3);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${l.log.slice(-3000)}\n${bob.log.slice(-1500)}`);
    } finally {
      await bob.dispose();
    }
  });
});
