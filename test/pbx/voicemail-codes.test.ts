// The voicemail feature codes with a real phone: a registered sipp extension dials *97 (its own
// box: the PIN is asked, no box number) or *98 (any box: number, then PIN), keys them as RFC 4733
// events, presses 1 and hears the message (its 1800 Hz tone on the wire), which moves to Old. An
// extension without a box dialling *97 is refused 404 "No Voicemail Box" before any call exists.
import { refusedCallerArgs } from '../../testkit/media-app/phones';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { testDb } from '../../testkit/db';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { createExtension, killAllSipp, sipp, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { callerPcap, ToneSink, type CallerEvent } from '../../testkit/pbx/audio';
import { keyEvents, toneMessage, extensionWithBox, keyingPhone, pbxCustomer } from '../../testkit/pbx/voicemail';
import { newId } from '../../core/ids';
import { mailboxSummary } from '../../core/voicemail/mwi';
import { refusedCaller } from './support';

const MESSAGE_HZ = 1800;

describe('pbx: voicemail feature codes *97 and *98 (sipp phone, keys as RFC 4733)', function () {
  this.timeout(120_000);
  let p: Platform;
  let dir: string;

  before(async () => {
    // sipp answers only MD5 challenges
    p = await startPlatform({ SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256' });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vm-codes-'));
  });
  after(async () => {
    killAllSipp();
    await p?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const message = (cid: string, boxId: string) => toneMessage(p.config.dataDir, cid, boxId, MESSAGE_HZ);

  /** The extension registers, dials `code`, keys `events` and waits for the platform's BYE. */
  async function dial(who: { ext: { username: string }; domain: string; password: string }, code: string, events: CallerEvent[], totalMs: number, sink: ToneSink) {
    const pcap = callerPcap(path.join(dir, `${newId()}.pcap`), totalMs, events);
    const user = who.ext.username;
    const scenario = keyingPhone({ user, domain: who.domain, target: code, rtpPort: sink.port, pcap, byeTimeoutMs: totalMs + 30_000 });
    const args = [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-p', String(await freePort()), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())];
    return sipp(scenario, [...args, '-au', user, '-ap', who.password, '-timeout', `${Math.ceil((totalMs + 40_000) / 1000)}s`], { killAfterMs: totalMs + 45_000 }).done;
  }

  it('*97: the own box after its PIN (no box number asked); the message plays and moves to Old', async () => {
    const db = await testDb();
    const cid = await pbxCustomer();
    const owner = await extensionWithBox(cid, { number: '401', pin: '2468' });
    const id = await message(cid, owner.box.id);
    const sink = await ToneSink.open();
    let r;
    try {
      // skipped PIN: "2" "4" "6" "8" would be wrong choices and "#" would exit before "1"
      r = await dial(owner, '*97', [...keyEvents(1500, '2468#'), ...keyEvents(10_000, '1'), ...keyEvents(16_000, '#')], 18_000, sink);
    } finally {
      sink.close();
    }
    expect(r.code, r.errors + r.messages.slice(-3000)).to.equal(0);
    expect(sink.toneMs(MESSAGE_HZ), 'the message played').to.be.greaterThan(800);
    expect(await db('voicemail_messages').where({ id }).first()).to.include({ folder: 'old' });
    expect(await mailboxSummary(db, owner.box.id)).to.deep.equal({ newCount: 0, oldCount: 1, urgentNew: 0, urgentOld: 0 });
    const c = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 10_000, 'call ended');
    expect(c.hangup_by, 'the menu hung up after Goodbye').to.equal('local');
  });

  it('*98: any box, its number and PIN keyed in, from an extension without a box', async () => {
    const db = await testDb();
    const cid = await pbxCustomer();
    const owner = await extensionWithBox(cid, { number: '402', pin: '1357' });
    const id = await message(cid, owner.box.id);
    const other = await createExtension(cid);
    const sink = await ToneSink.open();
    let r;
    try {
      r = await dial(other, '*98', [...keyEvents(1500, '402#1357#'), ...keyEvents(13_000, '1'), ...keyEvents(19_000, '#')], 21_000, sink);
    } finally {
      sink.close();
    }
    expect(r.code, r.errors + r.messages.slice(-3000)).to.equal(0);
    expect(sink.toneMs(MESSAGE_HZ), 'the message played').to.be.greaterThan(800);
    expect(await db('voicemail_messages').where({ id }).first()).to.include({ folder: 'old' });
  });

  it('*97 from an extension without a box: 404 No Voicemail Box, no call', async () => {
    const db = await testDb();
    const cid = await pbxCustomer();
    const lone = await createExtension(cid);
    const r = await sipp(
      refusedCaller({ user: lone.ext.username, domain: lone.domain, target: '*97', status: 404, phrase: 'No Voicemail Box' }),
      await refusedCallerArgs(`127.0.0.1:${p.sipPort}`, lone),
    ).done;
    expect(r.code, r.errors + r.messages.slice(-2000)).to.equal(0);
    expect(await db('calls').where({ customer_id: cid })).to.have.length(0);
  });
});
