// Leaving a voicemail message with a real phone: sipp calls a number whose flow runs the `voicemail`
// action. The caller hears the greeting and the 1 kHz beep (on the wire), then plays a 1800 Hz tone
// and presses #. The message is stored with the tone, caller and duration; the counts change; the
// mail with the WAV attached reaches a real SMTP server; an unsolicited message-summary NOTIFY
// (RFC 3842) reaches the box's extension, registered by a sipp phone, within 2 s.
import { endedActiveflow } from '../../testkit/call-ends';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { testDb } from '../../testkit/db';
import { sippMediaPort, freePort } from '../../testkit/ports';
import { eventsFor, killAllSipp, registerOnly, sipp, startPlatform, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';
import { callerPcap, ToneSink, wavToneMs } from '../../testkit/pbx/audio';
import { extensionWithBox, leaveToneMessage, notifyReceiver, numberWithFlow, pbxCustomer } from '../../testkit/pbx/voicemail';
import { readWav } from '../../media-engine/audio/wav';
import { mailboxSummary } from '../../core/voicemail/mwi';
import { newId } from '../../core/ids';
import { startSmtpReceiver, type SmtpReceiver } from '../support/smtp';

const MESSAGE_HZ = 1800;

describe('voicemail: leaving a message (sipp caller, SMTP server, sipp phone for MWI)', function () {
  this.timeout(120_000);
  let p: Platform;
  let smtp: SmtpReceiver;
  let dir: string;

  before(async () => {
    smtp = await startSmtpReceiver();
    p = await startPlatform({ SMTP_URL: smtp.url, MAIL_FROM: 'voicemail@example.test' });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vm-leave-'));
  });
  after(async () => {
    killAllSipp();
    await p?.close();
    await smtp?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('greeting, beep, the tone recorded as a message; counts, event, mail with the WAV, unsolicited NOTIFY', async () => {
    const db = await testDb();
    const cid = await pbxCustomer();
    const { ext, domain, password, box } = await extensionWithBox(cid, { number: '201', pin: '2468', greeting_text: 'Leave a message.', email: 'owner@example.test' });
    const number = '+899100003701';
    await numberWithFlow(cid, number, [{ type: 'voicemail', option: { box_id: box.id } }, { type: 'hangup' }]);

    // the box's phone registers, then waits on its port for the NOTIFY
    const phonePort = await freePort();
    const reg = await sipp(registerOnly(ext.username, domain), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', ext.username, '-ap', password]).done;
    expect(reg.code, reg.errors).to.equal(0);
    const phone = sipp(notifyReceiver(1, 60_000), ['-i', '127.0.0.1', '-p', String(phonePort), '-m', '1'], { killAfterMs: 70_000 });
    const notified = phone.done.then((r) => ({ r, at: Date.now() }));

    const sink = await leaveToneMessage(p.sipPort, number, path.join(dir, 'caller.pcap'), MESSAGE_HZ);
    // heard: the spoken greeting, then the beep (1 kHz), in that order
    const beep = sink.toneFlags(1000);
    const firstBeep = beep.indexOf(true);
    expect(firstBeep, 'beep heard').to.be.greaterThan(0);
    expect(beep.filter(Boolean).length * 20, 'beep length').to.be.within(160, 400);
    const runs = sink.loudRuns();
    expect(runs.length, 'greeting and beep').to.be.greaterThan(1);
    expect(runs[0]!.end - runs[0]!.start, 'greeting spoken before the beep').to.be.greaterThan(20);
    expect(runs[0]!.end).to.be.lessThan(firstBeep);

    // stored: one message with the caller, its duration and the tone
    const m = await until(async () => (await db('voicemail_messages').where({ box_id: box.id }))[0], 10_000, 'message stored');
    expect(m).to.include({ folder: 'new', caller_number: '15557654321', caller_name: 'Trunk Caller', customer_id: cid });
    const wav = readWav(path.join(p.config.dataDir, 'recordings', m.filename));
    expect(m.duration_ms).to.be.within(2000, 12_000);
    expect(wavToneMs(wav.samples, wav.info.format.sampleRate, MESSAGE_HZ), 'the caller tone in the message').to.be.greaterThan(1500);
    expect(await mailboxSummary(db, box.id)).to.deep.equal({ newCount: 1, oldCount: 0, urgentNew: 0, urgentOld: 0 });
    expect((await eventsFor(p.redis, m.id)).map((e) => e.event_type)).to.include('voicemail_message_created');

    // the lamp: an unsolicited NOTIFY to the registered phone within 2 s of the message
    const n = await notified;
    expect(n.r.code, n.r.errors + n.r.messages).to.equal(0);
    expect(n.at - new Date(m.tm_create).getTime(), 'NOTIFY latency').to.be.lessThan(2000);
    expect(n.r.messages).to.match(/Event: message-summary/i);
    expect(n.r.messages).to.match(/Messages-Waiting: yes/);
    expect(n.r.messages).to.include(`Message-Account: sip:${ext.username}@${domain}`);
    expect(n.r.messages).to.match(/Voice-Message: 1\/0 \(0\/0\)/);

    // the mail: to the box's address, the WAV attached
    const mail = await until(() => smtp.received.find((x) => x.to.includes('owner@example.test')), 15_000, 'voicemail mail');
    expect(mail.data).to.match(/Subject: New voicemail from Trunk Caller <15557654321> in box 201/);
    expect(mail.data).to.match(/Content-Type: audio\/wav/i);
    expect(mail.data).to.include(m.filename);
  });

  it('a full box says so, records nothing and the flow goes on', async () => {
    const db = await testDb();
    const cid = await pbxCustomer();
    const { box } = await extensionWithBox(cid, { number: '202', pin: '2468', max_messages: 1 });
    await db('voicemail_messages').insert({
      id: newId(),
      customer_id: cid,
      box_id: box.id,
      folder: 'new',
      caller_number: '+15550001111',
      filename: 'vm-full.wav',
      duration_ms: 1500,
      tm_create: new Date(),
    });
    const number = '+899100003702';
    await numberWithFlow(cid, number, [{ type: 'voicemail', option: { box_id: box.id } }, { type: 'hangup' }]);
    const pcap = callerPcap(path.join(dir, 'full.pcap'), 8000, [{ atMs: 3000, tone: { hz: MESSAGE_HZ, ms: 3000 } }]);
    const sink = await ToneSink.open();
    try {
      const steps = `<nop><action><exec play_pcap_audio="${pcap}"/></action></nop>`;
      const r = await sipp(
        uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, '15557654322', sink.port, { steps, byeTimeoutMs: 40_000 }),
        [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
        { killAfterMs: 60_000 },
      ).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      sink.close();
    }
    expect(sink.loudRuns().length, 'the full-box prompt spoken').to.be.greaterThan(0);
    expect(sink.toneMs(1000), 'no beep').to.equal(0);
    const c = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 10_000, 'call hung up');
    const af = await endedActiveflow(c.activeflow_id);
    expect(af.variables['svc.voicemail.result']).to.equal('box_full');
    expect((af.executed_actions as { type: string }[]).map((x) => x.type)).to.deep.equal(['voicemail', 'hangup']);
    expect(await db('voicemail_messages').where({ box_id: box.id })).to.have.length(1);
    expect(await mailboxSummary(db, box.id)).to.deep.equal({ newCount: 1, oldCount: 0, urgentNew: 0, urgentOld: 0 });
  });
});
