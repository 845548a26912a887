// An extension's own voicemail destination (migration 0941, set through REST): a sipp extension
// dials another; its registered sipp phone rings without answering (cancelled after voicemail_timeout)
// or answers 486 Busy Here; the box takes the call with the unavailable or the busy greeting and the
// caller's tone is stored as a message. With the setting off, busy is relayed as 486. Bad settings
// are 400 in the error envelope and change nothing.
import { refusedCallerArgs } from '../../testkit/media-app/phones';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { testDb } from '../../testkit/db';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { buildTestApp, type TestApp } from '../../testkit/api';
import { answeringUas, createExtension, killAllSipp, registerOnly, sipp, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { callerPcap, ToneSink } from '../../testkit/pbx/audio';
import { extensionWithBox, keyingPhone, pbxCustomer } from '../../testkit/pbx/voicemail';
import { refusedCaller } from './support';
import { repos } from '../../core/repos';

const MESSAGE_HZ = 1800;

describe('pbx: an extension not answering or busy goes to its voicemail box', function () {
  this.timeout(120_000);
  let p: Platform;
  let t: TestApp;
  let dir: string;

  before(async () => {
    // sipp answers only MD5 challenges
    p = await startPlatform({ SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256' });
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix, DATA_DIR: p.config.dataDir } });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ext-vm-'));
  });
  after(async () => {
    killAllSipp();
    await t?.close();
    await p?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A customer's extension with a box, its phone registered and running `phone`, settings put by REST. */
  async function setUp(boxNumber: string, settings: Record<string, unknown>, phone: string) {
    const db = await testDb();
    const cid = await pbxCustomer();
    const { token } = await repos(db).accesskeys.create({ customer_id: cid, name: 'ext-vm' });
    const e = await extensionWithBox(cid, { number: boxNumber, pin: '2468', greeting_text: 'Leave it.' });
    const put = await request(t.app).put(`/v1.0/extensions/${e.ext.id}`).query({ accesskey: token }).send(settings);
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    const port = await freePort();
    const reg = await sipp(registerOnly(e.ext.username, e.domain), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-au', e.ext.username, '-ap', e.password]).done;
    expect(reg.code, reg.errors).to.equal(0);
    const ringing = sipp(phone, ['-i', '127.0.0.1', '-p', String(port), '-m', '1'], { killAfterMs: 60_000 });
    return { ...e, cid, token, ringing };
  }

  /** Another extension of the customer dials it, plays its tone once answered and presses #. */
  async function callIn(cid: string, extension: string, name: string) {
    const caller = await createExtension(cid);
    const pcap = callerPcap(path.join(dir, `${name}.pcap`), 7000, [
      { atMs: 3000, tone: { hz: MESSAGE_HZ, ms: 2500 } },
      { atMs: 6000, digit: '#' },
    ]);
    const sink = await ToneSink.open();
    try {
      const scenario = keyingPhone({ user: caller.ext.username, domain: caller.domain, target: extension, rtpPort: sink.port, pcap, byeTimeoutMs: 40_000 });
      const args = [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-p', String(await freePort()), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())];
      return await sipp(scenario, [...args, '-au', caller.ext.username, '-ap', caller.password], { killAfterMs: 60_000 }).done;
    } finally {
      sink.close();
    }
  }

  async function greetingOf(cid: string): Promise<string> {
    const db = await testDb();
    const af = await until(
      async () => {
        const c = await db('calls').where({ customer_id: cid, direction: 'incoming' }).first();
        const row = c?.activeflow_id ? await db('activeflows').where({ id: c.activeflow_id }).first() : null;
        return row?.status === 'ended' ? row : null;
      },
      15_000,
      'voicemail flow ended',
    );
    const vm = (af.executed_actions as { type: string; option: { greeting?: string } }[]).find((a) => a.type === 'voicemail');
    return vm?.option.greeting ?? '';
  }

  it('not answered within voicemail_timeout: the phone is cancelled, the unavailable greeting, the message stored', async () => {
    const db = await testDb();
    const e = await setUp('711', { voicemail_on: { no_answer: true, busy: false }, voicemail_timeout: 5 }, answeringUas({ cancel: true, inviteTimeoutMs: 30_000 }));
    const started = Date.now();
    const r = await callIn(e.cid, e.ext.extension, 'noanswer');
    expect(r.code, r.errors + r.messages.slice(-2000)).to.equal(0);
    const phone = await e.ringing.done;
    expect(phone.code, phone.errors + phone.messages.slice(-2000)).to.equal(0);
    expect(phone.messages).to.match(/CANCEL sip:/);
    const m = await until(async () => (await db('voicemail_messages').where({ box_id: e.box.id }))[0], 10_000, 'message stored');
    expect(new Date(m.tm_create).getTime() - started, 'rang voicemail_timeout first').to.be.greaterThan(5000);
    expect(m.duration_ms).to.be.greaterThan(1000);
    expect(await greetingOf(e.cid)).to.equal('unavailable');
  });

  it('busy (486): the busy greeting, the message stored; with voicemail_on.busy off, 486 is relayed', async () => {
    const db = await testDb();
    const e = await setUp('712', { voicemail_on: { no_answer: false, busy: true } }, answeringUas({ final: 486, inviteTimeoutMs: 30_000 }));
    const r = await callIn(e.cid, e.ext.extension, 'busy');
    expect(r.code, r.errors + r.messages.slice(-2000)).to.equal(0);
    const m = await until(async () => (await db('voicemail_messages').where({ box_id: e.box.id }))[0], 10_000, 'message stored');
    expect(m.duration_ms).to.be.greaterThan(1000);
    expect(await greetingOf(e.cid)).to.equal('busy');

    const off = await setUp('713', { voicemail_on: { no_answer: true, busy: false } }, answeringUas({ final: 486, inviteTimeoutMs: 30_000 }));
    const caller = await createExtension(off.cid);
    const refused = await sipp(
      refusedCaller({ user: caller.ext.username, domain: caller.domain, target: off.ext.extension, status: 486, phrase: 'Busy Here', rings: true }),
      await refusedCallerArgs(`127.0.0.1:${p.sipPort}`, caller),
    ).done;
    expect(refused.code, refused.errors + refused.messages.slice(-2000)).to.equal(0);
    expect(await db('voicemail_messages').where({ box_id: off.box.id })).to.have.length(0);
  });

  it('REST: the settings are shown, bad ones are 400 and change nothing', async () => {
    const db = await testDb();
    const cid = await pbxCustomer();
    const { token } = await repos(db).accesskeys.create({ customer_id: cid, name: 'ext-vm' });
    const e = await extensionWithBox(cid, { number: '714', pin: '2468' });
    const api = (method: 'get' | 'put', body?: object) => {
      const r = request(t.app)[method](`/v1.0/extensions/${e.ext.id}`).query({ accesskey: token });
      return body ? r.send(body) : r;
    };
    const shown = await api('get');
    expect(shown.body).to.include({ voicemail_timeout: 20 });
    expect(shown.body.voicemail_on).to.deep.equal({ no_answer: false, busy: false });
    for (const bad of [{ voicemail_timeout: 4 }, { voicemail_timeout: 301 }, { voicemail_timeout: 7.5 }, { voicemail_on: { no_answer: 'yes', busy: false } }, { voicemail_on: { no_answer: true } }]) {
      const r = await api('put', bad);
      expect(r.status, JSON.stringify(bad)).to.equal(400);
      expect(r.body.error.reason, JSON.stringify(r.body)).to.equal('INVALID_ARGUMENT');
      expect(r.body.error.details.map((d: { field: string }) => d.field).join(), JSON.stringify(r.body)).to.match(/voicemail_(on|timeout)/);
    }
    const after = await api('get');
    expect(after.body).to.include({ voicemail_timeout: 20 });
    expect(after.body.voicemail_on).to.deep.equal({ no_answer: false, busy: false });
    const ok = await api('put', { voicemail_on: { no_answer: true, busy: true }, voicemail_timeout: 30 });
    expect(ok.status).to.equal(200);
    expect(ok.body).to.include({ voicemail_timeout: 30 });
    expect(ok.body.voicemail_on).to.deep.equal({ no_answer: true, busy: true });
  });
});
