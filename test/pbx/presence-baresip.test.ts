// A real softphone watching another extension: Debian's baresip 1.0 with its contact and presence
// modules, registered as an extension, SUBSCRIBEs (Event: presence, digest) to a contact of the same
// customer through sip-server and media-app; the status it shows for the contact (the `contacts`
// command over ctrl_tcp) follows the contact's registration and its call, as a sipp phone registers
// and takes a real call.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { truncateAll } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { createExtension, killAllSipp, registerOnly, sipp, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { callerPhone, callerArgs, answeringPhone } from '../../testkit/media-app/phones';
import { Baresip } from '../../testkit/baresip';
import { toneWav } from '../edge/audio';

describe('presence on baresip (presence module)', function () {
  this.timeout(90_000);
  let p: Platform;
  let phone: Baresip | null = null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-baresip-'));
  const mic = path.join(dir, 'mic.wav');

  before(async () => {
    await truncateAll();
    toneWav(mic, 440);
    p = await startPlatform();
  });
  after(async () => {
    killAllSipp();
    await phone?.dispose();
    await p?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /**
   * What baresip shows for the watched contact: its `contacts` listing's line for it, e.g.
   * `>      \x1b[32mOnline\x1b[;m B <sip:...>`. Before any NOTIFY it says Unknown; a PIDF `closed` is
   * Offline, `open` Online, `open` with `<rpid:on-the-phone/>` Busy.
   */
  const shown = async (b: Baresip, uri: string): Promise<string> => {
    const r = await b.command('contacts');
    const line = String(r.data ?? '')
      .replace(/\u001b\[[0-9;]*m/g, '') // eslint-disable-line no-control-regex -- the colour codes baresip prints
      .split('\n')
      .find((l) => l.includes(uri));
    return (line ?? '').trim();
  };

  it('shows the watched extension offline, then online once it registers, busy during a call, online after', async () => {
    const watcher = await createExtension();
    const b = await createExtension(watcher.customerId);
    const caller = await createExtension(watcher.customerId);
    const uri = `sip:${b.ext.extension}@${b.domain}`;
    phone = await Baresip.start(
      { user: watcher.ext.username, domain: watcher.domain, password: watcher.password, outboundProxy: `sip:127.0.0.1:${p.sipPort}`, contacts: [`"B" <${uri}>;presence=p2p`] },
      mic,
    );
    const ph = phone;
    // the registrar's binding, not baresip's REGISTER_OK event: that may fire before the ctrl socket is connected
    await until(async () => (await p.app.registrar.bindings.get(`${watcher.ext.username}@${watcher.domain}`)).length > 0 || null, 15_000, 'baresip registered').catch((e: Error) => {
      throw new Error(`${e.message}\n${ph.log.slice(-3000)}`);
    });
    // the subscription: the platform holds it once baresip answered our challenge
    await until(() => (p.app.factory.services.presence!.subscriptionCount > 0 ? true : null), 15_000, 'baresip subscribed');
    await until(async () => /\bOffline\b/.test(await shown(ph, uri)), 10_000, 'Offline shown (closed)');

    const sipServer = `127.0.0.1:${p.sipPort}`;
    const phonePort = await freePort();
    const reg = await sipp(registerOnly(b.ext.username, b.domain), [sipServer, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', b.ext.username, '-ap', b.password]).done;
    expect(reg.code, reg.errors).to.equal(0);
    await until(async () => /\bOnline\b/.test(await shown(ph, uri)), 10_000, 'Online shown (open)');

    const answering = await answeringPhone(b, phonePort);
    await new Promise((r) => setTimeout(r, 300));
    const calling = sipp(callerPhone(caller.ext.username, caller.domain, b.ext.extension, p.sipPort, { register: false, holdMs: 3000 }), await callerArgs(sipServer, caller));
    await until(async () => /\bBusy\b/.test(await shown(ph, uri)), 10_000, 'Busy shown during the call (on-the-phone)');
    const [rc, re] = await Promise.all([calling.done, answering.done]);
    expect(rc.code, rc.errors).to.equal(0);
    expect(re.code, re.errors).to.equal(0);
    await until(async () => /\bOnline\b/.test(await shown(ph, uri)), 10_000, 'Online again after the call');
  });
});
