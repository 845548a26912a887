// A real softphone's message lamp: Debian's baresip 1.0 with its mwi module, registered as an
// extension with a voicemail box, SUBSCRIBEs to its own account's message-summary (digest) through
// sip-server and media-app. What it reports for each NOTIFY (the MWI_NOTIFY event over ctrl_tcp)
// follows the box as the message is marked unread, then read, through the REST API.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { testDb } from '../../testkit/db';
import { buildTestApp, type TestApp } from '../../testkit/api';
import { killAllSipp, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { extensionWithBox, pbxCustomer } from '../../testkit/pbx/voicemail';
import { repos } from '../../core/repos';
import { newId } from '../../core/ids';
import { Baresip } from '../../testkit/baresip';
import { toneWav } from '../edge/audio';

describe('message lamp on baresip (mwi module)', function () {
  this.timeout(90_000);
  let p: Platform;
  let t: TestApp;
  let phone: Baresip | null = null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mwi-baresip-'));
  const mic = path.join(dir, 'mic.wav');

  before(async () => {
    toneWav(mic, 440);
    p = await startPlatform();
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix, DATA_DIR: p.config.dataDir } });
  });
  after(async () => {
    killAllSipp();
    await phone?.dispose();
    await t?.close();
    await p?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /**
   * The bodies baresip reported so far, from what its mwi module prints (`----- MWI for <aor> -----` and the
   * body): its MWI_NOTIFY ctrl event for the first NOTIFY may come before the ctrl socket is connected.
   */
  const reported = (b: Baresip): string[] =>
    b.log
      .split(/^----- MWI for [^\n]*-----$/m)
      .slice(1)
      .map((block) => block.split(/\n\s*\n/)[0]!.trim());

  it('reports no messages, then one new once unread, then none new once read', async () => {
    const db = await testDb();
    const cid = await pbxCustomer();
    const { token } = await repos(db).accesskeys.create({ customer_id: cid, name: 'mwi-baresip' });
    const { ext, domain, password, box } = await extensionWithBox(cid, { number: '821', pin: '2468' });
    const id = newId();
    await db('voicemail_messages').insert({ id, customer_id: cid, box_id: box.id, folder: 'old', caller_number: '+15550001111', filename: 'vm-b.wav', duration_ms: 1000, tm_create: new Date() });

    phone = await Baresip.start({ user: ext.username, domain, password, outboundProxy: `sip:127.0.0.1:${p.sipPort}`, mwi: true }, mic);
    const ph = phone;
    const saw = (pred: (body: string) => boolean, what: string) => until(() => reported(ph).find(pred), 15_000, `${what}\n${ph.log.slice(-3000)}`);
    await saw((b) => /Messages-Waiting: no/.test(b) && b.includes('Voice-Message: 0/1 (0/0)'), 'the first NOTIFY: nothing new');

    const put = (folder: string) => request(t.app).put(`/v1.0/voicemail_messages/${id}`).query({ accesskey: token }).send({ folder });
    const unread = Date.now();
    expect((await put('new')).status).to.equal(200);
    await saw((b) => /Messages-Waiting: yes/.test(b) && b.includes('Voice-Message: 1/0 (0/0)'), 'lit');
    expect(Date.now() - unread, 'lit within 2 s').to.be.lessThan(2000);
    const read = Date.now();
    expect((await put('old')).status).to.equal(200);
    await until(() => reported(ph).filter((b) => /Messages-Waiting: no/.test(b)).length >= 2, 15_000, `cleared\n${ph.log.slice(-3000)}`);
    expect(Date.now() - read, 'cleared within 2 s').to.be.lessThan(2000);
    expect(reported(ph).every((b) => b.includes(`Message-Account: sip:${ext.extension}@${domain}`))).to.equal(true);
  });
});
