/**
 * Issue 52, finding 1: voicemail PINs could be guessed without limit across calls (3 tries per
 * call, then call again). Wrong PINs are now counted across calls in Redis per box and per caller
 * (core/voicemail/pin-lockout.ts). sipp callers key box numbers and PINs (RFC 4733) into a number
 * whose flow runs voicemail_main, as the menu tests do:
 *
 * - box: three wrong PINs in one call lock the box; the next call, from another caller, with the
 *   right PIN does not get in (no message played, login_failed); events voicemail_box_login_failed
 *   and voicemail_box_locked are published; after the admin's unlock the right PIN opens the box.
 * - caller: a caller that fails on box numbers that do not exist and then on a real box is locked
 *   out of every box on its next call, right PIN or not (result `locked`).
 * - POST /v1.0/voicemail_boxes/{id}/unlock on the real control-api lifts a lock the counter set
 *   (and is in the OpenAPI document).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { testDb } from '../../testkit/db';
import { sippMediaPort } from '../../testkit/ports';
import { eventsFor, killAllSipp, sipp, startPlatform, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';
import { callerPcap, ToneSink, type CallerEvent } from '../../testkit/pbx/audio';
import { keyEvents, toneMessage, extensionWithBox, numberWithFlow, pbxCustomer } from '../../testkit/pbx/voicemail';
import { buildTestApp, createFixture, type TestApp } from '../../testkit/api';
import { PinLockout } from '../../core/voicemail/pin-lockout';
import { voicemailBoxesRepo } from '../../core/voicemail/boxes';

const MESSAGE_HZ = 1800;

describe('security: voicemail PIN lockout across calls (issue 52, finding 1)', function () {
  this.timeout(240_000);
  let p: Platform;
  let dir: string;

  before(async () => {
    p = await startPlatform({
      VOICEMAIL_PIN_LOCKOUT_FAILURES: '3',
      VOICEMAIL_PIN_LOCKOUT_WINDOW_SEC: '600',
      VOICEMAIL_PIN_LOCKOUT_SEC: '600',
      VOICEMAIL_PIN_LOCKOUT_CALLER_FAILURES: '4',
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vm-lock-'));
  });
  after(async () => {
    killAllSipp();
    await p?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const message = (cid: string, boxId: string) => toneMessage(p.config.dataDir, cid, boxId, MESSAGE_HZ);

  /** One call from `from` to `number`, keying `events`; the tone heard and the flow's voicemail result. */
  async function call(cid: string, number: string, from: string, events: CallerEvent[], totalMs: number): Promise<{ toneMs: number; result: string }> {
    const db = await testDb();
    const before = new Set((await db('calls').where({ customer_id: cid })).map((c: { id: string }) => c.id));
    const sink = await ToneSink.open();
    try {
      const pcap = callerPcap(path.join(dir, `${from}-${Date.now()}.pcap`), totalMs, events);
      const steps = `<nop><action><exec play_pcap_audio="${pcap}"/></action></nop>`;
      const r = await sipp(
        uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, from, sink.port, { steps, byeTimeoutMs: totalMs + 30_000 }),
        [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort()), '-timeout', `${Math.ceil((totalMs + 40_000) / 1000)}s`],
        { killAfterMs: totalMs + 45_000 },
      ).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      sink.close();
    }
    const af = await until(
      async () => {
        const c = (await db('calls').where({ customer_id: cid })).find((x: { id: string }) => !before.has(x.id));
        const row = c ? await db('activeflows').where({ id: c.activeflow_id }).first() : null;
        return row?.status === 'ended' ? row : null;
      },
      10_000,
      'activeflow ended',
    );
    return { toneMs: sink.toneMs(MESSAGE_HZ), result: String(af.variables['svc.voicemail.result']) };
  }

  it('three wrong PINs lock the box for the next call and any caller; events published; the unlock lets the right PIN in', async () => {
    const cid = await pbxCustomer();
    const { box } = await extensionWithBox(cid, { number: '311', pin: '4321' });
    await message(cid, box.id);
    const number = '+899100003811';
    await numberWithFlow(cid, number, [{ type: 'voicemail_main' }, { type: 'hangup' }]);

    const guess = await call(cid, number, '15550002222', [...keyEvents(1000, '311#1111#'), ...keyEvents(7000, '311#2222#'), ...keyEvents(13_000, '311#3333#')], 16_000);
    expect(guess.result).to.equal('login_failed');
    // another caller, another call, the right PIN: the box is locked
    const owner = await call(cid, number, '15550003333', [...keyEvents(1000, '311#4321#'), ...keyEvents(7000, '311#4321#'), ...keyEvents(13_000, '311#4321#'), ...keyEvents(17_000, '1')], 20_000);
    expect(owner.result, 'locked box: the right PIN does not open it').to.equal('login_failed');
    expect(owner.toneMs, 'no message played').to.equal(0);

    const types = (await eventsFor(p.redis, box.id)).map((e) => e.event_type);
    expect(types.filter((t) => t === 'voicemail_box_login_failed').length, 'one login_failed per wrong PIN').to.be.at.least(3);
    const locked = (await eventsFor(p.redis, box.id)).filter((e) => e.event_type === 'voicemail_box_locked');
    expect(locked.map((e) => e.data.locked)).to.include('box');
    expect(locked[0]!.data).to.include({ id: box.id, caller: 'tel:15550002222', lock_sec: 600 });
    expect(JSON.stringify(locked[0]!.data)).to.not.contain('pin');

    // the admin's unlock (the same Redis keys the API route clears): the right PIN opens the box again
    const lockout = new PinLockout(p.redis, p.config.redisKeyPrefix, { failures: 3, windowSec: 600, lockSec: 600, callerFailures: 4 });
    expect(await lockout.unlock(cid, box.id)).to.equal(true);
    const after = await call(cid, number, '15550004444', [...keyEvents(1000, '311#4321#'), ...keyEvents(11_000, '1'), ...keyEvents(17_000, '#')], 19_000);
    expect(after.toneMs, 'the message played').to.be.greaterThan(800);
    expect(after.result).to.equal('exit');
  });

  it('a caller that fails across boxes is locked out of every box on its next call', async () => {
    const cid = await pbxCustomer();
    const { box } = await extensionWithBox(cid, { number: '313', pin: '4321' });
    await message(cid, box.id);
    const number = '+899100003813';
    await numberWithFlow(cid, number, [{ type: 'voicemail_main' }, { type: 'hangup' }]);
    // three box numbers that do not exist: the caller's count is 3, no box's
    const scan = await call(cid, number, '15550005555', [...keyEvents(1000, '903#1111#'), ...keyEvents(7000, '904#1111#'), ...keyEvents(13_000, '905#1111#')], 16_000);
    expect(scan.result).to.equal('login_failed');
    // next call: a wrong PIN on a real box is the fourth: locked at once, the right PIN after it never checked
    const next = await call(cid, number, '15550005555', [...keyEvents(1000, '313#9999#'), ...keyEvents(7000, '313#4321#'), ...keyEvents(13_000, '1')], 16_000);
    expect(next.result).to.equal('locked');
    expect(next.toneMs).to.equal(0);
    // another caller is not locked out of that box (its own count is 1)
    const other = await call(cid, number, '15550006666', [...keyEvents(1000, '313#4321#'), ...keyEvents(11_000, '1'), ...keyEvents(17_000, '#')], 19_000);
    expect(other.result).to.equal('exit');
    expect(other.toneMs).to.be.greaterThan(800);
  });

  describe('POST /v1.0/voicemail_boxes/{id}/unlock', () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
    });
    after(async () => t?.close());

    it('lifts the lock and the callers locked on the box, publishes voicemail_box_unlocked, is documented', async () => {
      const f = await createFixture(t.ctx);
      const box = await voicemailBoxesRepo(t.ctx.db).create(f.customer.id, { number: '77', pin: '2468' });
      if (typeof box === 'string') throw new Error(box);
      const lockout = new PinLockout(t.ctx.redis, t.ctx.config.redisKeyPrefix, { failures: 2, windowSec: 60, lockSec: 60, callerFailures: 2 });
      await lockout.fail(f.customer.id, 'extension:100', { id: box.id, locked: false });
      const second = await lockout.fail(f.customer.id, 'extension:100', { id: box.id, locked: false });
      expect(second).to.include({ boxLockedSec: 60, callerLockedSec: 60 });
      // a try on the locked box counts for the caller only, and notes it for the unlock
      const onLocked = await lockout.fail(f.customer.id, 'extension:200', { id: box.id, locked: true });
      expect(onLocked).to.include({ boxFailures: 0, callerFailures: 1, boxLockedSec: 0 });
      expect(await lockout.boxLockedFor(box.id)).to.be.greaterThan(0);
      const r = await request(t.app).post(`/v1.0/voicemail_boxes/${box.id}/unlock`).query({ accesskey: f.accesskey });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body).to.include({ id: box.id, was_locked: true });
      expect(await lockout.boxLockedFor(box.id)).to.equal(0);
      expect(await lockout.callerLockedFor(f.customer.id, 'extension:100')).to.equal(0);
      // the callers' counts went with it: two more failures are needed to lock extension:200
      expect((await lockout.fail(f.customer.id, 'extension:200', null)).callerLockedSec).to.equal(0);
      const again = await request(t.app).post(`/v1.0/voicemail_boxes/${box.id}/unlock`).query({ accesskey: f.accesskey });
      expect(again.body.was_locked).to.equal(false);
      // another customer's box is not found
      const g = await createFixture(t.ctx);
      const foreign = await request(t.app).post(`/v1.0/voicemail_boxes/${box.id}/unlock`).query({ accesskey: g.accesskey });
      expect(foreign.status).to.equal(404);
      expect(foreign.body.error.reason).to.equal('RESOURCE_NOT_FOUND');
      expect((await eventsFor(t.ctx.redis, box.id)).map((e) => e.event_type)).to.include('voicemail_box_unlocked');
      const doc = (await request(t.app).get('/v1.0/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
      expect(doc.paths['/voicemail_boxes/{id}/unlock']?.post, 'in the OpenAPI document').to.not.equal(undefined);
    });
  });
});
