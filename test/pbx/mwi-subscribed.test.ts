// Subscribed MWI (RFC 3842 over SUBSCRIBE/NOTIFY) on the real call plane with two media-app nodes
// sharing Redis: a raw UDP subscriber on each node watches an extension (Event: message-summary);
// a sipp caller leaves a message in the extension's box on node A; both subscriptions get one
// NOTIFY "Messages-Waiting: yes" within 2 s; the message marked read through the REST API (the
// control-api, another process's notice) clears both within 2 s. One NOTIFY per change per
// subscription, however many nodes hear the notice. A free-standing box is watched by its number.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import type { Redis } from 'ioredis';
import { testDb } from '../../testkit/db';
import { sippMediaPort } from '../../testkit/ports';
import { buildTestApp, type TestApp } from '../../testkit/api';
import { createExtension, killAllSipp, sipp, sleep, startPlatform, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';
import { callerPcap, ToneSink } from '../../testkit/pbx/audio';
import { extensionWithBox, numberWithFlow, pbxCustomer } from '../../testkit/pbx/voicemail';
import { Subscriber, type SipMessage, type Subscription } from '../../testkit/pbx/subscriber';
import { repos } from '../../core/repos';
import { newId } from '../../core/ids';
import { voicemailBoxesRepo } from '../../core/voicemail/boxes';
import { mwiChannel, parseMwiNotice, type MwiNotice } from '../../core/voicemail/mwi';

describe('voicemail: subscribed MWI (SUBSCRIBE Event: message-summary) across two nodes', function () {
  this.timeout(120_000);
  let a: Platform;
  let b: Platform;
  let t: TestApp;
  let subA: Subscriber;
  let subB: Subscriber;
  let listener: Redis;
  let dir: string;
  const notices: MwiNotice[] = [];
  const arrived = new WeakMap<SipMessage, number>();

  before(async () => {
    a = await startPlatform();
    b = await startPlatform({ REDIS_KEY_PREFIX: a.config.redisKeyPrefix });
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: a.config.redisKeyPrefix, DATA_DIR: a.config.dataDir } });
    subA = await Subscriber.open(a.sipPort);
    subB = await Subscriber.open(b.sipPort);
    for (const s of [subA, subB]) s.onNotify = (m) => arrived.set(m, Date.now());
    listener = a.redis.duplicate();
    await listener.subscribe(mwiChannel(a.config.redisKeyPrefix));
    listener.on('message', (_c: string, m: string) => {
      const n = parseMwiNotice(m);
      if (n) notices.push(n);
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mwi-sub-'));
  });
  after(async () => {
    killAllSipp();
    listener?.disconnect();
    subA?.close();
    subB?.close();
    await t?.close();
    await b?.close();
    await a?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const api = (key: string, method: 'get' | 'put', p: string) => request(t.app)[method](`/v1.0${p}`).query({ accesskey: key });
  const waiting = (yes: boolean) => (n: SipMessage) => n.body.startsWith(`Messages-Waiting: ${yes ? 'yes' : 'no'}\r\n`);

  it('an extension: NOTIFY no, a left message lights it within 2 s on both nodes, read by REST clears it; one NOTIFY per change', async () => {
    const db = await testDb();
    const cid = await pbxCustomer();
    const { token } = await repos(db).accesskeys.create({ customer_id: cid, name: 'mwi' });
    const { ext, domain, password, box } = await extensionWithBox(cid, { number: `5${process.pid % 1000}1`, pin: '2468', greeting_text: 'Leave a message.' });
    const watch = { user: ext.username, domain, password, resource: ext.extension, event: 'message-summary', expires: 600 };
    const subs: Subscription[] = [await subA.subscribe(watch), await subB.subscribe(watch)];
    for (const s of subs) {
      expect(s.response.status).to.be.oneOf([200, 202]);
      const first = await s.waitFor();
      expect(first.get('content-type')).to.equal('application/simple-message-summary');
      expect(first.body).to.equal(`Messages-Waiting: no\r\nMessage-Account: sip:${ext.extension}@${domain}\r\nVoice-Message: 0/0 (0/0)\r\n`);
    }

    // a caller leaves a message through node A
    const number = '+899100003901';
    await numberWithFlow(cid, number, [{ type: 'voicemail', option: { box_id: box.id } }, { type: 'hangup' }]);
    const pcap = callerPcap(path.join(dir, 'caller.pcap'), 7000, [
      { atMs: 2500, tone: { hz: 1800, ms: 3000 } },
      { atMs: 6000, digit: '#' },
    ]);
    const sink = await ToneSink.open();
    try {
      const steps = `<nop><action><exec play_pcap_audio="${pcap}"/></action></nop>`;
      const r = await sipp(
        uacWaitsForBye(`${number}@127.0.0.1:${a.sipPort}`, '15557654329', sink.port, { steps, byeTimeoutMs: 40_000 }),
        [`127.0.0.1:${a.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
        { killAfterMs: 60_000 },
      ).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      sink.close();
    }
    const m = await until(async () => (await db('voicemail_messages').where({ box_id: box.id }))[0], 10_000, 'message stored');
    for (const s of subs) {
      const lit = await s.waitFor(waiting(true), 5000);
      expect(lit.body).to.include('Voice-Message: 1/0 (0/0)');
      expect(arrived.get(lit)! - new Date(m.tm_create).getTime(), 'NOTIFY latency after the message').to.be.lessThan(2000);
    }

    // read through the REST API
    const readAt = Date.now();
    const put = await api(token, 'put', `/voicemail_messages/${m.id}`).send({ folder: 'old' });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    for (const s of subs) {
      const off = await s.waitFor((n) => waiting(false)(n) && n.body.includes('Voice-Message: 0/1 (0/0)'), 5000);
      expect(arrived.get(off)! - readAt, 'NOTIFY latency after the read').to.be.lessThan(2000);
    }

    // one NOTIFY per change per subscription: the first, then one per notice of the box
    await sleep(1000);
    const changes = notices.filter((n) => n.box_id === box.id).length;
    expect(changes, 'notices of the box').to.be.at.least(2);
    for (const s of subs) expect(s.notifies.length, 'NOTIFYs of one subscription').to.equal(1 + changes);
  });

  it('a free-standing box by its number; an extension without a box has no counts', async () => {
    const db = await testDb();
    const cid = await pbxCustomer();
    const { token } = await repos(db).accesskeys.create({ customer_id: cid, name: 'mwi' });
    const watcher = await createExtension(cid);
    const boxNumber = `6${process.pid % 1000}2`;
    const box = await voicemailBoxesRepo(db).create(cid, { number: boxNumber, pin: '2468' });
    if (typeof box === 'string') throw new Error(box);
    const id = newId();
    await db('voicemail_messages').insert({ id, customer_id: cid, box_id: box.id, folder: 'old', caller_number: '+15550001111', filename: 'vm-x.wav', duration_ms: 1000, tm_create: new Date() });

    const s = await subA.subscribe({ user: watcher.ext.username, domain: watcher.domain, password: watcher.password, resource: boxNumber, event: 'message-summary', expires: 600 });
    expect(s.response.status).to.be.oneOf([200, 202]);
    expect((await s.waitFor()).body).to.equal(`Messages-Waiting: no\r\nMessage-Account: sip:${boxNumber}@${watcher.domain}\r\nVoice-Message: 0/1 (0/0)\r\n`);
    const unreadAt = Date.now();
    const put = await api(token, 'put', `/voicemail_messages/${id}`).send({ folder: 'new' });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    const lit = await s.waitFor(waiting(true), 5000);
    expect(lit.body).to.include('Voice-Message: 1/0 (0/0)');
    expect(arrived.get(lit)! - unreadAt).to.be.lessThan(2000);

    // the watcher's own extension has no box: watched, nothing waiting, no counts
    const own = await subB.subscribe({ user: watcher.ext.username, domain: watcher.domain, password: watcher.password, resource: watcher.ext.extension, event: 'message-summary', expires: 600 });
    expect(own.response.status).to.be.oneOf([200, 202]);
    expect((await own.waitFor()).body).to.equal(`Messages-Waiting: no\r\nMessage-Account: sip:${watcher.ext.extension}@${watcher.domain}\r\n`);
    // a number that is neither an extension nor a box
    const none = await subA.subscribe({ user: watcher.ext.username, domain: watcher.domain, password: watcher.password, resource: '99999999', event: 'message-summary', expires: 600 });
    expect(none.response.status).to.equal(404);
  });
});
