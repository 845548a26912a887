// The voice menu of a box (flow action voicemail_main, reached by dialling a number): a sipp caller
// keys in the box number and PIN (RFC 4733), hears "You have 2 new ..." spoken, plays the first
// message (its 1800 Hz tone heard on the wire), deletes it (7), hears and saves the next (9), exits
// (#). The counts and the MWI notices follow. Three wrong logins hang up.
import { endedActiveflow } from '../../testkit/call-ends';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { testDb } from '../../testkit/db';
import { sippMediaPort } from '../../testkit/ports';
import { killAllSipp, sipp, startPlatform, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';
import { callerPcap, ToneSink, wavToneMs, type CallerEvent } from '../../testkit/pbx/audio';
import { keyEvents, toneMessage, extensionWithBox, numberWithFlow, pbxCustomer } from '../../testkit/pbx/voicemail';
import { checkPin } from '../../core/voicemail/boxes';
import { readWav } from '../../media-engine/audio/wav';
import { mailboxSummary, mwiChannel, parseMwiNotice, type MwiNotice } from '../../core/voicemail/mwi';

const MESSAGE_HZ = 1800;

describe('voicemail: the voice menu (voicemail_main) with a sipp caller', function () {
  this.timeout(150_000);
  let p: Platform;
  let dir: string;
  let sub: Redis;
  const notices: MwiNotice[] = [];

  before(async () => {
    p = await startPlatform();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vm-menu-'));
    sub = p.redis.duplicate();
    await sub.subscribe(mwiChannel(p.config.redisKeyPrefix));
    sub.on('message', (_c: string, m: string) => {
      const n = parseMwiNotice(m);
      if (n) notices.push(n);
    });
  });
  after(async () => {
    killAllSipp();
    sub?.disconnect();
    await p?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A message in the box: 1.5 s of the tone, left `agoMs` ago. */
  const message = (cid: string, boxId: string, agoMs: number) => toneMessage(p.config.dataDir, cid, boxId, MESSAGE_HZ, agoMs);

  async function call(number: string, events: CallerEvent[], totalMs: number, sink: ToneSink) {
    const pcap = callerPcap(path.join(dir, `${number}.pcap`), totalMs, events);
    const steps = `<nop><action><exec play_pcap_audio="${pcap}"/></action></nop>`;
    return sipp(
      uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, '15550002222', sink.port, { steps, byeTimeoutMs: totalMs + 30_000 }),
      [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort()), '-timeout', `${Math.ceil((totalMs + 40_000) / 1000)}s`],
      {
        killAfterMs: totalMs + 45_000,
      },
    ).done;
  }

  it('logs in with box number and PIN, counts spoken, plays (tone heard), deletes, saves, exits', async () => {
    const db = await testDb();
    const cid = await pbxCustomer();
    const { box } = await extensionWithBox(cid, { number: '301', pin: '4321' });
    const first = await message(cid, box.id, 60_000);
    const second = await message(cid, box.id, 30_000);
    const number = '+899100003801';
    await numberWithFlow(cid, number, [{ type: 'voicemail_main' }, { type: 'hangup' }]);
    notices.length = 0;

    const sink = await ToneSink.open();
    let r;
    try {
      r = await call(number, [...keyEvents(1000, '301#4321#'), ...keyEvents(11_000, '1'), ...keyEvents(17_000, '7'), ...keyEvents(24_000, '9'), ...keyEvents(30_000, '#')], 32_000, sink);
    } finally {
      sink.close();
    }
    expect(r.code, r.errors + r.messages).to.equal(0);

    // the counts were spoken after the login: speech of at least 2 s before the first message's tone
    const tone = sink.toneFlags(MESSAGE_HZ);
    const firstTone = tone.indexOf(true);
    expect(firstTone, 'a message tone heard').to.be.greaterThan(0);
    const speechBefore = sink.loudRuns().filter((run) => run.end < firstTone);
    expect(speechBefore.reduce((n, run) => n + run.end - run.start + 1, 0) * 20, 'prompts and counts spoken before the first message').to.be.greaterThan(2000);
    // both messages were played: the tone heard twice, apart
    const toneRuns = sink.loudRuns(300, 5).filter((run) => tone.slice(run.start, run.end + 1).filter(Boolean).length > 10);
    expect(toneRuns.length, 'two messages played').to.be.at.least(2);

    // 7 deleted the first (file gone), 9 saved the second: no new, one old
    const a = (await db('voicemail_messages').where({ id: first }).first())!;
    const b = (await db('voicemail_messages').where({ id: second }).first())!;
    expect(a.tm_delete, 'first deleted').to.not.equal(null);
    expect(fs.existsSync(path.join(p.config.dataDir, 'recordings', a.filename))).to.equal(false);
    expect(b).to.include({ folder: 'old' });
    expect(b.tm_delete).to.equal(null);
    expect(await mailboxSummary(db, box.id)).to.deep.equal({ newCount: 0, oldCount: 1, urgentNew: 0, urgentOld: 0 });
    const mine = await until(
      () => {
        const n = notices.filter((x) => x.box_id === box.id);
        return n.some((x) => x.summary.newCount === 0 && x.summary.oldCount === 1) ? n : null;
      },
      3000,
      'MWI notices',
    );
    expect(mine[0]!.summary.newCount, 'first notice: one fewer new').to.equal(1);
    const af = await until(
      async () => {
        const c = await db('calls').where({ customer_id: cid }).first();
        const row = c ? await db('activeflows').where({ id: c.activeflow_id }).first() : null;
        return row?.status === 'ended' ? row : null;
      },
      10_000,
      'activeflow ended',
    );
    expect(af.variables['svc.voicemail.result']).to.equal('exit');
  });

  it('with box_id and skip_pin goes straight to the counts: no box number, no PIN', async () => {
    const db = await testDb();
    const cid = await pbxCustomer();
    const { box } = await extensionWithBox(cid, { number: '304', pin: '4321' });
    const id = await message(cid, box.id, 1000);
    const number = '+899100003805';
    await numberWithFlow(cid, number, [{ type: 'voicemail_main', option: { box_id: box.id, skip_pin: true } }, { type: 'hangup' }]);
    const sink = await ToneSink.open();
    let r;
    try {
      // had a PIN been asked, "1" would be its first digit and nothing would play
      r = await call(number, [...keyEvents(5000, '1'), ...keyEvents(11_000, '#')], 13_000, sink);
    } finally {
      sink.close();
    }
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(sink.toneMs(MESSAGE_HZ), 'the message played').to.be.greaterThan(800);
    expect(await db('voicemail_messages').where({ id }).first()).to.include({ folder: 'old' });
    expect(await mailboxSummary(db, box.id)).to.deep.equal({ newCount: 0, oldCount: 1, urgentNew: 0, urgentOld: 0 });
  });

  it('three wrong logins hang up', async () => {
    const db = await testDb();
    const cid = await pbxCustomer();
    const { box } = await extensionWithBox(cid, { number: '302', pin: '4321' });
    await message(cid, box.id, 1000);
    const number = '+899100003802';
    await numberWithFlow(cid, number, [{ type: 'voicemail_main' }, { type: 'talk', option: { text: 'never reached' } }]);
    const sink = await ToneSink.open();
    const started = Date.now();
    let r;
    try {
      r = await call(number, [...keyEvents(1000, '302#1111#'), ...keyEvents(7000, '302#9999#'), ...keyEvents(13_000, '999#4321#')], 16_000, sink);
    } finally {
      sink.close();
    }
    // the platform hung up (sipp answered its BYE), before the caller's pcap ran out plus a prompt
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(Date.now() - started).to.be.lessThan(40_000);
    expect(sink.toneMs(MESSAGE_HZ), 'no message played').to.equal(0);
    const c = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 10_000, 'call hung up');
    expect(c.hangup_by).to.equal('local');
    // hung up by the menu itself: the flow never reached its next action
    const af = await endedActiveflow(c.activeflow_id);
    expect((af.executed_actions as { type: string }[]).map((x) => x.type)).to.deep.equal(['voicemail_main']);
    expect(await mailboxSummary(db, box.id)).to.deep.equal({ newCount: 1, oldCount: 0, urgentNew: 0, urgentOld: 0 });
  });

  it('records the unavailable greeting and changes the PIN by phone; the next caller hears that greeting', async () => {
    const db = await testDb();
    const cid = await pbxCustomer();
    const { box } = await extensionWithBox(cid, { number: '303', pin: '4321' });
    const number = '+899100003803';
    await numberWithFlow(cid, number, [{ type: 'voicemail_main' }, { type: 'hangup' }]);
    const sink = await ToneSink.open();
    let r;
    try {
      r = await call(
        number,
        [
          ...keyEvents(1000, '303#4321#'),
          ...keyEvents(10_000, '0'),
          ...keyEvents(12_000, '1'),
          { atMs: 19_000, tone: { hz: MESSAGE_HZ, ms: 3000 } },
          ...keyEvents(22_500, '#'),
          ...keyEvents(27_000, '5'),
          ...keyEvents(29_000, '8642#'),
          ...keyEvents(35_000, '8642#'),
          ...keyEvents(40_000, '*'),
          ...keyEvents(42_000, '#'),
        ],
        44_000,
        sink,
      );
    } finally {
      sink.close();
    }
    expect(r.code, r.errors + r.messages).to.equal(0);
    const row = (await db('voicemail_boxes').where({ id: box.id }).first())!;
    expect(row.greeting_unavailable, 'greeting recorded').to.match(/^vmg-.*\.wav$/);
    const wav = readWav(path.join(p.config.dataDir, 'recordings', row.greeting_unavailable));
    expect(wavToneMs(wav.samples, wav.info.format.sampleRate, MESSAGE_HZ), 'the tone in the greeting').to.be.greaterThan(1000);
    expect(await checkPin(row, '8642'), 'new PIN').to.equal(true);
    expect(await checkPin(row, '4321'), 'old PIN').to.equal(false);

    // a caller leaving a message hears the recorded greeting (the tone), then the 1 kHz beep
    const leave = '+899100003804';
    await numberWithFlow(cid, leave, [{ type: 'voicemail', option: { box_id: box.id } }, { type: 'hangup' }]);
    const heard = await ToneSink.open();
    try {
      const c = await call(leave, [...keyEvents(9000, '#')], 10_000, heard);
      expect(c.code, c.errors + c.messages).to.equal(0);
    } finally {
      heard.close();
    }
    const greetingTone = heard.toneFlags(MESSAGE_HZ).indexOf(true);
    const beep = heard.toneFlags(1000).indexOf(true);
    expect(greetingTone, 'recorded greeting heard').to.be.at.least(0);
    expect(heard.toneMs(MESSAGE_HZ)).to.be.greaterThan(1000);
    expect(beep, 'beep after the greeting').to.be.greaterThan(greetingTone);
  });
});
