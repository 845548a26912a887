// AMD in campaigns: a campaign with `amd` places every attempt with answering machine detection.
// Two sipp UASes answer and play audio made at test time (espeak-ng/sox): a person saying "hello?"
// or a six-second greeting ending in a beep. The verdict lands on the campaigncall (amd_result);
// machine_handle hangup makes a machine a failed try (reason machine) retried after
// try_interval_machine; continue lets the flow run and the attempt succeeds.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { truncateAll } from '../../testkit/db';
import { answeringUas, sipp, until } from '../../testkit/media-app/harness';
import { concat, espeak, silenceMs, soxSynth } from '../../testkit/media-engine/audio';
import { writeRtpPcap } from '../speech/pcap';
import { api, useCampaignStack } from './support';

interface Cc {
  outdial_target_id: string;
  status: string;
  result: string;
  result_reason: string;
  amd_result: string;
  try_count: number;
  reference_id: string;
  tm_create: string;
  tm_update: string;
}
const ms = (legacy: string) => Date.parse(legacy.replace(' ', 'T') + 'Z');

describe('campaigns with AMD (sipp plays a person and an answering machine)', function () {
  this.timeout(100_000);
  let t: TestApp;
  let f: Fixture;
  let dir: string;

  useCampaignStack(
    1,
    { EGRESS_ALLOW_CIDRS: '127.0.0.0/8' },
    (s) =>
      ({
        apps: [t],
      } = s),
    (p) => ({ DATA_DIR: p.config.dataDir }),
  );
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaign-amd-'));
    writeRtpPcap(path.join(dir, 'human.pcap'), concat(silenceMs(400), espeak('hello?'), silenceMs(6000)));
    const greeting = concat(silenceMs(300), espeak("Hi, you've reached Sam and Robin. We can't take your call right now. Please leave a message after the tone.", 'en-us', 175), silenceMs(300));
    writeRtpPcap(path.join(dir, 'machine.pcap'), concat(greeting, soxSynth(['0.6', 'sine', '1000'], ['vol', '0.4']), silenceMs(8000)));
    await truncateAll(t.ctx.db);
    f = await createFixture(t.ctx);
  });
  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function uas(pcap: string, calls: number) {
    const port = await freePort();
    const scenario = answeringUas().replace('<recv request="ACK"/>', `<recv request="ACK"/>\n<nop><action><exec play_pcap_audio="${pcap}"/></action></nop>`);
    const s = sipp(scenario, ['-i', '127.0.0.1', '-p', String(port), '-m', String(calls), '-mi', '127.0.0.1', '-mp', String(await sippMediaPort()), '-timeout', '80s'], { killAfterMs: 85_000 });
    await s.port;
    return { port, done: s.done };
  }

  it('machine_handle hangup: a machine is a failed try (machine), retried after try_interval_machine; a person succeeds (human); continue lets a machine through', async () => {
    const a = api(t, f);
    const ok = async (r: Promise<{ status: number; body: any }>) => {
      const res = await r;
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body;
    };
    const human = await uas(path.join(dir, 'human.pcap'), 1);
    const machine = await uas(path.join(dir, 'machine.pcap'), 3);
    const outplan = await ok(
      a.post('/outplans', {
        source: { type: 'sip', target: 'campaign@sip.test' },
        dial_timeout: 8000,
        try_interval: 30_000,
        try_interval_machine: 500,
        max_try_count_0: 2,
      }),
    );
    const list = async (...targets: string[]) => {
      const od = await ok(a.post('/outdials', {}));
      const ids = [];
      for (const tg of targets) ids.push((await ok(a.post(`/outdials/${od.id}/targets`, { destination_0: { type: 'sip', target: tg } }))).id as string);
      return { id: od.id as string, ids };
    };
    const hangupList = await list(`person@127.0.0.1:${human.port}`, `machine@127.0.0.1:${machine.port}`);
    const continueList = await list(`machine2@127.0.0.1:${machine.port}`);
    const actions = [{ type: 'hangup' }];
    const c1 = await ok(a.post('/campaigns', { outplan_id: outplan.id, outdial_id: hangupList.id, service_level: 2, actions, amd: { machine_handle: 'hangup' } }));
    const c2 = await ok(a.post('/campaigns', { outplan_id: outplan.id, outdial_id: continueList.id, service_level: 1, actions, amd: { machine_handle: 'continue' } }));
    await ok(a.put(`/campaigns/${c1.id}/status`, { status: 'run' }));
    await ok(a.put(`/campaigns/${c2.id}/status`, { status: 'run' }));
    for (const c of [c1, c2]) await until(async () => (await ok(a.get(`/campaigns/${c.id}`))).status === 'stop', 60_000, 'campaign stop');
    for (const s of [human, machine]) {
      const r = await s.done;
      expect(r.code, r.errors).to.equal(0);
    }
    const ccs = async (id: string): Promise<Cc[]> => (await ok(a.get(`/campaigns/${id}/campaigncalls`))).result.reverse();
    const one = await ccs(c1.id);
    const of = (id: string) => one.filter((c) => c.outdial_target_id === id);
    expect(of(hangupList.ids[0]!).map((c) => [c.try_count, c.result, c.result_reason, c.amd_result])).to.deep.equal([[1, 'success', 'answered', 'human']]);
    const m = of(hangupList.ids[1]!);
    expect(m.map((c) => [c.try_count, c.result, c.result_reason, c.amd_result])).to.deep.equal([
      [1, 'fail', 'machine', 'machine'],
      [2, 'fail', 'machine', 'machine'],
    ]);
    const gap = ms(m[1]!.tm_create) - ms(m[0]!.tm_update);
    expect(gap, 'try_interval_machine, not try_interval').to.be.at.least(450).and.below(10_000);
    const machineCalls = await t.ctx.db('calls').whereIn(
      'id',
      m.map((c) => c.reference_id),
    );
    expect(machineCalls.map((c) => c.hangup_reason)).to.deep.equal(['amd', 'amd']);
    expect((await ccs(c2.id)).map((c) => [c.try_count, c.result, c.result_reason, c.amd_result])).to.deep.equal([[1, 'success', 'answered', 'machine']]);
  });
});
