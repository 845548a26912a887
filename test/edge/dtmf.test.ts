// DTMF between real phones (issue #32, items 1 and 2): sipp phones on loopback key digits as SIP
// INFO (application/dtmf-relay and application/dtmf) and as RFC 4733 telephone-events (sipp's shipped
// pcap); a flow gathers INFO digits, and on an extension-to-extension call the far phone gets each
// digit in its own form: telephone-events on ITS payload type and RTP clock, or INFO when its SDP
// offered no telephone-event. An INFO with a body the platform does not take gets 415.
import { endedActiveflow } from '../../testkit/call-ends';
import { usePlatform } from '../../testkit/media-app/platform-hooks';
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { repos } from '../../core/repos';
import { testDb } from '../../testkit/db';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { createExtension, registerOnly, sipp, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { extensionsRepo } from '../../core/repos/extensions';
import { dtmfCallee, dtmfCaller, eventGroups, expectInfo, inbandDtmfPcap, inbandKeys, infoStep, playDigitPcap, RtpCapture, telephoneEventFloodPcap, type EventPacket } from './dtmf-support';
import { loopbackTrunk } from '../../testkit/trunks';

const ID = { good: '2d000000-0000-4000-8000-000000000001', bad: '2d000000-0000-4000-8000-000000000002' };

describe('DTMF: SIP INFO and RFC 4733 between phones', function () {
  this.timeout(90_000);
  let p: Platform;

  // sipp answers only MD5 challenges: offer MD5 first
  usePlatform({ SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256' }, (x) => (p = x), { truncate: false });

  it('INFO digits (dtmf-relay and dtmf) feed digits_receive and a branch; other bodies get 415, a bad key 400, an empty INFO 200', async () => {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `dtmf${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'dtmf' })).id;
    // a trunk by address: the one on loopback while this test runs (removed at its end)
    const trunk = await loopbackTrunk(db, cid, `dtmf${Date.now()}${Math.floor(Math.random() * 1000)}`);
    try {
      await infoIntoFlow(cid, db);
    } finally {
      await trunksRepo(db).softDelete(trunk.id);
    }
  });

  async function infoIntoFlow(cid: string, db: Awaited<ReturnType<typeof testDb>>) {
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([
        { type: 'answer' },
        { type: 'digits_receive', option: { duration: 15000, length: 2 } },
        { type: 'branch', option: { variable: 'svc.call.digits', default_target_id: ID.bad, target_ids: { '7#': ID.good } } },
        { id: ID.bad, type: 'hangup' },
        { id: ID.good, type: 'sleep', option: { duration: 300 } },
        { type: 'hangup' },
      ]),
    } as never);
    const number = '+899100000932';
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    const steps = [
      '<pause milliseconds="800"/>',
      infoStep(2, null, '', 200), // keepalive: answered as before
      infoStep(3, 'application/media_control+xml', '<media_control><vc_primitive><to_encoder><picture_fast_update/></to_encoder></vc_primitive></media_control>', 415),
      infoStep(4, 'application/dtmf-relay', 'Signal=X\nDuration=160', 400),
      infoStep(5, 'application/dtmf-relay', 'Signal=7\nDuration=160', 200),
      infoStep(6, 'application/dtmf', '#', 200),
    ].join('\n');
    const r = await sipp(uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, 'pbx', await freePort(), { steps }), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 40_000 })
      .done;
    expect(r.code, r.errors + r.messages.slice(-4000)).to.equal(0);
    // the 415 says what an INFO may carry
    expect(r.messages).to.match(/SIP\/2\.0 415[^\n]*\n(?:[^\n]+\n)*?Accept: application\/dtmf-relay, application\/dtmf/);
    const call = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 10_000, 'hangup');
    const af = await endedActiveflow(call.activeflow_id);
    const path_ = (af.executed_actions as { type: string }[]).map((a) => a.type);
    expect(path_).to.deep.equal(['answer', 'digits_receive', 'branch', 'sleep', 'hangup']);
  }

  it('an INFO digit ends a recording on its end_of_key in the media worker, like an RFC 4733 one', async () => {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `dtmfr${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'dtmf' })).id;
    const trunk = await loopbackTrunk(db, cid, `dtmfr${Date.now()}${Math.floor(Math.random() * 1000)}`);
    try {
      const flow = await flowsRepo(db).create({
        customer_id: cid,
        actions: parseActions([{ type: 'answer' }, { type: 'recording_start', option: { end_of_key: '#', duration: 20 } }, { type: 'sleep', option: { duration: 4000 } }, { type: 'hangup' }]),
      } as never);
      const number = '+899100000934';
      await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
      const steps = ['<pause milliseconds="1000"/>', infoStep(2, 'application/dtmf-relay', 'Signal=#\nDuration=100', 200)].join('\n');
      const r = await sipp(uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, 'pbx', await freePort(), { steps }), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 40_000 })
        .done;
      expect(r.code, r.errors + r.messages.slice(-4000)).to.equal(0);
      const call = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 10_000, 'hangup');
      const rec = await until(async () => (await db('recordings').where({ reference_id: call.id, status: 'ended' }))[0], 10_000, 'recording ended');
      // ended by the key about a second in, not by the hangup 4 s later
      expect(rec.tm_end!.getTime() - rec.tm_start!.getTime(), 'recording length ms').to.be.below(2500);
      expect(call.tm_hangup!.getTime() - rec.tm_end!.getTime(), 'the call went on after the recording').to.be.above(1500);
    } finally {
      await trunksRepo(db).softDelete(trunk.id);
    }
  });

  /** A registered callee (its media to `cap`) and a caller that runs `steps` in the call; both must finish cleanly. */
  async function extensionCall(calleeOpts: { telephoneEventPt?: number; inCall?: string; slowInfoMs?: number }, steps: string, setup?: (calleeExtId: string) => Promise<void>) {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    await setup?.(b.ext.id);
    const cap = await RtpCapture.open();
    const sipServer = `127.0.0.1:${p.sipPort}`;
    const phonePort = await freePort();
    const reg = await sipp(registerOnly(b.ext.username, b.domain), [sipServer, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', b.ext.username, '-ap', b.password]).done;
    expect(reg.code, reg.errors).to.equal(0);
    const callee = sipp(dtmfCallee(b.ext.username, cap.port, calleeOpts), ['-i', '127.0.0.1', '-p', String(phonePort), '-m', '1'], { killAfterMs: 45_000 });
    await new Promise((r) => setTimeout(r, 300)); // let the UAS bind
    const caller = sipp(
      dtmfCaller(a.ext.username, a.domain, b.ext.extension, steps),
      [sipServer, '-i', '127.0.0.1', '-m', '1', '-au', a.ext.username, '-ap', a.password, '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
      { killAfterMs: 45_000 },
    );
    const [rc, re] = await Promise.all([caller.done, callee.done]);
    cap.close();
    expect(rc.code, 'caller ' + rc.errors + rc.messages.slice(-4000)).to.equal(0);
    expect(re.code, 'callee ' + re.errors + re.messages.slice(-4000)).to.equal(0);
    return { cap, caller: rc, callee: re };
  }

  /** One relayed digit: marker first, growing durations, the end three times, one timestamp, the leg's own SSRC and clock. */
  function expectDigit(group: EventPacket[], event: number, samples: number, audio: { ts: number; ssrc: number; seq: number }[]) {
    expect(group[0]!.marker, 'marker on the first packet').to.equal(true);
    expect(group.slice(1).every((e) => !e.marker)).to.equal(true);
    expect(
      group.every((e) => e.event === event),
      `event ${event}`,
    ).to.equal(true);
    const ends = group.filter((e) => e.end);
    expect(ends, 'the end packet three times').to.have.length(3);
    expect(
      ends.every((e) => e.duration === samples),
      `end duration ${samples}: ${ends.map((e) => e.duration)}`,
    ).to.equal(true);
    const durations = group.filter((e) => !e.end).map((e) => e.duration);
    expect(durations, 'durations grow').to.deep.equal([...durations].sort((x, y) => x - y));
    expect(
      group.slice(-3).every((e) => e.end),
      'nothing after the end',
    ).to.equal(true);
    // the far leg's own stream: its SSRC, consecutive sequence numbers, its RTP clock (the event starts
    // where the audio packet before it left off, and the audio after it continues past its length)
    const ssrc = audio[0]!.ssrc;
    expect(
      group.every((e) => e.ssrc === ssrc),
      'SSRC of the leg',
    ).to.equal(true);
    const before = audio.filter((x) => x.seq < group[0]!.seq || x.seq - group[0]!.seq > 30000).pop();
    expect(before, 'audio before the digit').to.not.equal(undefined);
    expect((group[0]!.ts - before!.ts) >>> 0, 'event timestamp follows the audio clock').to.equal(160);
    for (let i = 1; i < group.length; i++) expect((group[i]!.seq - group[i - 1]!.seq) & 0xffff).to.equal(1);
  }

  it('extension to extension: RFC 4733 and INFO digits leave on the far leg as telephone-events of its payload type and clock', async () => {
    const steps = ['<pause milliseconds="1500"/>', playDigitPcap('dtmf_2833_5.pcap', 1500), infoStep(10, 'application/dtmf-relay', 'Signal=7\nDuration=200', 200), '<pause milliseconds="1500"/>'].join(
      '\n',
    );
    const { cap } = await extensionCall({ telephoneEventPt: 96 }, steps);
    const audio = cap.packets.filter((x) => x.pt === 0);
    expect(audio.length, 'the far leg gets audio').to.be.greaterThan(50);
    const groups = eventGroups(cap, 96);
    expect(cap.events(101), 'nothing on the caller’s payload type').to.have.length(0);
    expect(
      groups.map((g) => g[0]!.event),
      'digits 5 (RFC 4733) then 7 (INFO)',
    ).to.deep.equal([5, 7]);
    expectDigit(groups[0]!, 5, 2240, audio); // the pcap's 280 ms
    expectDigit(groups[1]!, 7, 1600, audio); // Duration=200 ms
  });

  it('extension to extension: a far phone that offered no telephone-event gets each digit as INFO', async () => {
    const inCall = [expectInfo('Signal=5[[:space:]]+Duration=280', 1), expectInfo('Signal=#[[:space:]]+Duration=120', 2)].join('\n');
    const steps = [
      '<pause milliseconds="1500"/>',
      playDigitPcap('dtmf_2833_5.pcap', 1500),
      infoStep(10, 'application/dtmf-relay', 'Signal=11\nDuration=120', 200),
      '<pause milliseconds="1500"/>',
    ].join('\n');
    const { cap, callee } = await extensionCall({ inCall }, steps);
    expect(
      cap.packets.filter((x) => x.pt !== 0),
      'no telephone-event on a leg that did not negotiate it',
    ).to.have.length(0);
    expect(callee.messages).to.match(/INFO sip:/);
  });

  const setMode = (mode: 'info' | 'inband') => async (extId: string) => {
    await extensionsRepo(await testDb()).update(extId, { dtmf_mode: mode });
  };
  const digitsBoth = [
    '<pause milliseconds="1500"/>',
    playDigitPcap('dtmf_2833_5.pcap', 1500),
    infoStep(10, 'application/dtmf-relay', 'Signal=7\nDuration=200', 200),
    '<pause milliseconds="1500"/>',
  ].join('\n');

  it('dtmf_mode info: the far phone gets INFO even though it offered telephone-event', async () => {
    const inCall = [expectInfo('Signal=5[[:space:]]+Duration=280', 1), expectInfo('Signal=7[[:space:]]+Duration=200', 2)].join('\n');
    const { cap } = await extensionCall({ telephoneEventPt: 96, inCall }, digitsBoth, setMode('info'));
    expect(cap.events(96), 'no telephone-event').to.have.length(0);
  });

  it('dtmf_mode inband: the far phone hears the digits as tones in its audio, no telephone-event', async () => {
    const { cap } = await extensionCall({ telephoneEventPt: 96 }, digitsBoth, setMode('inband'));
    expect(cap.events(96), 'no telephone-event').to.have.length(0);
    expect(inbandKeys(cap)).to.equal('57');
  });

  it('in-band DTMF from the caller leaves the far leg as RFC 4733 on its payload type', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dtmf-'));
    try {
      const pcap = path.join(dir, 'inband-38.pcap');
      fs.writeFileSync(pcap, inbandDtmfPcap('38', 200));
      const steps = ['<pause milliseconds="1500"/>', `<nop><action><exec play_pcap_audio="${pcap}"/></action></nop>`, '<pause milliseconds="2500"/>'].join('\n');
      const { cap } = await extensionCall({ telephoneEventPt: 96 }, steps);
      const groups = eventGroups(cap, 96);
      expect(
        groups.map((g) => g[0]!.event),
        'digits 3 then 8',
      ).to.deep.equal([3, 8]);
      for (const g of groups) {
        expect(g[0]!.marker).to.equal(true);
        expect(g.filter((e) => e.end)).to.have.length(3);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a caller keying 400 digits in 2 s: the far leg gets a bounded backlog of them, not minutes of queued digits', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dtmf-flood-'));
    try {
      const pcap = path.join(dir, 'flood.pcap');
      // 400 digits of 100 ms, one every 5 ms: each takes ~220 ms to send on the far leg
      fs.writeFileSync(pcap, telephoneEventFloodPcap(400, 800, 5000));
      const steps = ['<pause milliseconds="1500"/>', `<nop><action><exec play_pcap_audio="${pcap}"/></action></nop>`, '<pause milliseconds="9000"/>'].join('\n');
      const { cap } = await extensionCall({ telephoneEventPt: 96 }, steps);
      const groups = eventGroups(cap, 96);
      expect(groups.length, 'some digits are relayed').to.be.greaterThan(0);
      expect(groups.length, 'not every digit of the flood').to.be.below(60);
      // the backlog drains within a few seconds of the flood: the last seconds of the call are audio again
      let last = -1;
      cap.packets.forEach((x, i) => {
        if (x.pt === 96) last = i;
      });
      const audioAfter = cap.packets.slice(last + 1).filter((x) => x.pt === 0).length;
      expect(audioAfter, 'audio packets after the last relayed digit').to.be.above(150);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the same flood to a phone that takes INFO and answers each after 200 ms: a bounded backlog of INFOs', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dtmf-flood-'));
    try {
      const pcap = path.join(dir, 'flood.pcap');
      fs.writeFileSync(pcap, telephoneEventFloodPcap(400, 800, 5000));
      const steps = ['<pause milliseconds="1500"/>', `<nop><action><exec play_pcap_audio="${pcap}"/></action></nop>`, '<pause milliseconds="12000"/>'].join('\n');
      // no telephone-event in its SDP: every relayed digit is an INFO, one at a time
      const { callee } = await extensionCall({ slowInfoMs: 200 }, steps);
      const infos = (callee.messages.match(/^INFO sip:/gm) ?? []).length;
      expect(infos, 'INFOs the far phone got').to.be.greaterThan(0);
      // unbounded, INFOs came every ~200 ms until the call ended (~14 s); bounded, a few after the 2 s flood
      expect(infos, 'INFOs the far phone got').to.be.below(35);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a trunk with dtmf_mode info gets digits_send as INFO', async () => {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `dtmfs${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'dtmf' })).id;
    const trunk = await loopbackTrunk(db, cid, `dtmfs${Date.now()}${Math.floor(Math.random() * 1000)}`, { dtmf_mode: 'info' });
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([
        { type: 'answer' },
        { type: 'sleep', option: { duration: 500 } },
        { type: 'digits_send', option: { digits: '1#', duration: 120, interval: 100 } },
        { type: 'sleep', option: { duration: 500 } },
        { type: 'hangup' },
      ]),
    } as never);
    const number = '+899100000933';
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    const steps = [expectInfo('Signal=1[[:space:]]+Duration=120', 1), expectInfo('Signal=#[[:space:]]+Duration=120', 2)].join('\n');
    try {
      const r = await sipp(uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, 'pbx', await freePort(), { steps }), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 40_000 })
        .done;
      expect(r.code, r.errors + r.messages.slice(-4000)).to.equal(0);
    } finally {
      await trunksRepo(db).softDelete(trunk.id);
    }
  });
});
