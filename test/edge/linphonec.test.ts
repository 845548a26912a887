// linphonec 5.1 (Debian) provisioned from the URL the QR code carries: it fetches the Linphone
// document itself, registers with the platform's default settings, and calls a baresip phone.
import fs from 'node:fs';
import { expect } from 'chai';
import request from 'supertest';
import { type TestApp, type Fixture } from '../../testkit/api';
import { until, type Platform } from '../../testkit/media-app/harness';
import { Linphonec } from './linphonec';
import { Baresip } from '../../testkit/baresip';
import { toneShare, toneWav } from './audio';
import os from 'node:os';
import path from 'node:path';
import { useProvisioningStack } from '../../testkit/provisioning-stack';

const HAVE_LINPHONEC = fs.existsSync('/usr/bin/linphonec');

(HAVE_LINPHONEC ? describe : describe.skip)('edge: linphonec provisioned from the QR URL', function () {
  this.timeout(90_000);
  let p: Platform;
  let t: TestApp;
  let f: Fixture;
  let base = '';
  const phones: Linphonec[] = [];

  useProvisioningStack((s) => ({ p, t, f, base } = s), { apiEnv: { SIP_ADVERTISED_HOST: '127.0.0.1' } });
  afterEach(async () => {
    await Promise.all(phones.splice(0).map((l) => l.dispose()));
  });

  it('fetches the document from the provisioning URL and registers', async () => {
    const api = (m: 'post' | 'get', url: string) => request(t.app)[m](`/v1.0${url}`).query({ accesskey: f.accesskey });
    const ext = (await api('post', '/extensions').send({ extension: '7101', password: 'secret-pass-7101' })).body;
    const tok = (await api('post', `/extensions/${ext.id}/provisioning-token`)).body;
    expect(tok.token, JSON.stringify(tok)).to.be.a('string');
    // linphonec 5.1 sends `User-Agent: Unknown` when it fetches (the Linphone apps send LinphoneAndroid/...):
    // a User-Agent that names no phone needs format=.
    const l = await Linphonec.start(`${base}/provisioning/extension?token=${tok.token}&format=linphone`);
    phones.push(l);
    await until(async () => (await p.app.registrar.bindings.get(`${ext.username}@${ext.domain_name}`)).length > 0 || null, 20_000, 'linphonec registered').catch((err: Error) => {
      throw new Error(`${err.message}\n${l.log.slice(-1500)}`);
    });
  });

  it('provisioned, calls a baresip phone with a tone each way', async () => {
    const api = (m: 'post' | 'get', url: string) => request(t.app)[m](`/v1.0${url}`).query({ accesskey: f.accesskey });
    const a = (await api('post', '/extensions').send({ extension: '7201', password: 'secret-pass-7201' })).body;
    const b = (await api('post', '/extensions').send({ extension: '7202', password: 'secret-pass-7202' })).body;
    const tok = (await api('post', `/extensions/${a.id}/provisioning-token`)).body;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lp-tones-'));
    const tone = (hz: number) => {
      const f = path.join(dir, `${hz}.wav`);
      toneWav(f, hz);
      return f;
    };
    const bob = await Baresip.start({ user: b.username, domain: b.domain_name, password: 'secret-pass-7202', outboundProxy: `sip:127.0.0.1:${p.sipPort}` }, tone(1300));
    const l = await Linphonec.start(`${base}/provisioning/extension?token=${tok.token}&format=linphone`);
    phones.push(l);
    try {
      await until(async () => (await p.app.registrar.bindings.get(`${a.username}@${a.domain_name}`)).length > 0 || null, 20_000, 'linphonec registered');
      await until(async () => (await p.app.registrar.bindings.get(`${b.username}@${b.domain_name}`)).length > 0 || null, 10_000, 'baresip registered');
      const heard = path.join(dir, 'linphone-heard.wav');
      l.send('soundcard use files');
      l.send(`call sip:${b.username}@${b.domain_name}`);
      await until(() => bob.saw('CALL_ESTABLISHED') || null, 15_000, 'bob answers');
      await l.connected();
      l.send(`play ${tone(700)}`);
      l.send(`record ${heard}`);
      await new Promise((r) => setTimeout(r, 3000));
      l.send('terminate');
      await until(() => bob.saw('CALL_CLOSED') || null, 20_000, 'bob sees the hang-up');
      await bob.stop();
      expect(toneShare(bob.heardWav, 700), 'baresip hears linphonec (700 Hz)').to.be.greaterThan(0.5);
      expect(toneShare(heard, 1300), 'linphonec hears baresip (1300 Hz)').to.be.greaterThan(0.5);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${l.log.slice(-3000)}`);
    } finally {
      await bob.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
