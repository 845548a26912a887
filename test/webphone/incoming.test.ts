// Calls to the browser phone in Chromium, through sip-server's ws listener and a real rtpengine:
// REST POST /v1.0/calls to the browser's extension rings the page, which answers, hears the `talk`
// action and sends RFC 4733 DTMF that `digits_receive` + `branch` act on; a queue call reaches an
// agent signed in through the browser (the agent credential path); rtpengine killed mid-call ends
// the call with a reason within 2 s and the page shows it.
import { expect } from 'chai';
import type { Page } from 'puppeteer-core';
import request from 'supertest';
import { Permission } from '../../core/permissions';
import { queuesRepo } from '../../core/repos/queues';
import { tagsRepo } from '../../core/repos/tags';
import { createAgent, createFixture, type Fixture } from '../../testkit/api';
import type { TestBrowser } from '../../testkit/browser';
import { testDb } from '../../testkit/db';
import type { Rtpengine } from '../../testkit/rtpengine';
import { RtpSink, sleep, until, createExtension } from '../../testkit/media-app/harness';
import { audioStats, callText, openPhone, queueCallFromSipp, queuecallInService, signInAgent, signInExtension, useWebrtcRig, waitPhase, waitReg, type Rig } from '../../testkit/webphone/harness';

/** The id of the (first) call a POST /v1.0/calls created. */
function callIdOf(body: { calls?: { id: string }[] }): string {
  const id = body.calls?.[0]?.id;
  expect(id, JSON.stringify(body)).to.be.a('string');
  return id!;
}

const ID = {
  digits: '7c1f6d0a-0001-4c1e-9a57-000000000001',
  sales: '7c1f6d0a-0001-4c1e-9a57-000000000002',
  other: '7c1f6d0a-0001-4c1e-9a57-000000000003',
};

describe('webphone: calls to Chromium', function () {
  this.timeout(120_000);
  let rtp: Rtpengine;
  let rig: Rig;
  let b: TestBrowser;
  let f: Fixture;
  useWebrtcRig({ apiEnv: { RATE_LIMIT_SCALE: '0' } }, (s) => ({ rig, b, rtp } = s));
  before(async () => {
    f = await createFixture(rig.t.ctx);
  });

  const activeflowOf = async (callId: string) => {
    const db = await testDb();
    const call = await db('calls').where({ id: callId }).first();
    return call?.activeflow_id ? db('activeflows').where({ id: call.activeflow_id }).first() : null;
  };

  /** A page signed in as a new extension of the fixture's customer, and a REST call to it running `actions`; its call id. */
  async function ringBrowser(actions: object[], source: string): Promise<{ page: Page; callId: string }> {
    const { ext, domain, password } = await createExtension(f.customer.id);
    const page = await openPhone(b, rig.base);
    await signInExtension(page, `${ext.username}@${domain}`, password);
    await waitReg(page, 'registered');
    const r = await request(rig.t.app)
      .post('/v1.0/calls')
      .query({ accesskey: f.accesskey })
      .send({ source: { type: 'tel', target: source }, destinations: [{ type: 'extension', target: ext.extension }], actions });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return { page, callId: callIdOf(r.body) };
  }

  it("POST /v1.0/calls to the browser's extension: it rings, the page answers, hears `talk`, and its RFC 4733 DTMF picks the branch", async () => {
    const { page, callId } = await ringBrowser(
      [
        { type: 'talk', option: { text: 'Hello from the platform. For sales press five.', language: 'en-US' } },
        { id: ID.digits, type: 'digits_receive', option: { duration: 10000, length: 1 } },
        { type: 'branch', option: { variable: 'svc.call.digits', default_target_id: ID.other, target_ids: { '5': ID.sales } } },
        { id: ID.other, type: 'hangup' },
        { id: ID.sales, type: 'sleep', option: { duration: 300 } },
        { type: 'hangup' },
      ],
      '+15550002222',
    );
    try {
      await waitPhase(page, 'incoming', 15_000);
      expect(await callText(page)).to.contain('Incoming call');
      await page.click('#answer');
      await waitPhase(page, 'connected');
      // the talk action plays: the browser receives voiced audio
      await until(async () => ((await activeflowOf(callId))?.current_action?.type === 'digits_receive' ? true : null), 20_000, 'digits_receive reached');
      const heard = await audioStats(page);
      expect(heard.inbound!.packetsReceived).to.be.greaterThan(50);
      expect(heard.inbound!.averageLevel, 'the talk action heard in the browser').to.be.greaterThan(0.01);
      // DTMF 5 from the keypad (RFC 4733 telephone-events in the RTP)
      await page.click('button[data-key="5"]');
      await waitPhase(page, 'ended', 15_000);
      const af = await until(
        async () => {
          const a = await activeflowOf(callId);
          return a?.status === 'ended' ? a : null;
        },
        10_000,
        'activeflow ended',
      );
      const path = (af.executed_actions as { id: string; type: string }[]).map((a) => a.id);
      expect(path, JSON.stringify(af.executed_actions)).to.include(ID.sales);
      expect(path).to.not.include(ID.other);
    } finally {
      await page.close();
    }
  });

  it('a queue call reaches an agent signed in through the browser (agent credential on its extension)', async () => {
    const db = await testDb();
    const tag = await tagsRepo(db).create(f.customer.id, { name: `sales-${Date.now()}` });
    if (tag === 'duplicate') throw new Error('tag');
    const { ext } = await createExtension(f.customer.id);
    const a = await createAgent(rig.t.ctx, f.customer.id, Permission.CustomerAgent);
    await rig.t.ctx.repos.agents.update(a.agent.id, { addresses: [{ type: 'extension', target: ext.extension }], tag_ids: [tag.id], status: 'available' });
    const page = await openPhone(b, rig.base);
    const sink = await RtpSink.open();
    try {
      await signInAgent(page, a.agent.username, a.password);
      await waitReg(page, 'registered');
      const queue = await queuesRepo(db).create(f.customer.id, { name: 'sales', tag_ids: [tag.id], service_timeout: 20_000 });
      const uas = await queueCallFromSipp(rig.t.app, f.accesskey, queue.id, sink.port, '+15550003333');
      await waitPhase(page, 'incoming', 20_000);
      await page.click('#answer');
      await waitPhase(page, 'connected');
      const qc = await queuecallInService(db, queue.id);
      expect(qc.service_agent_id).to.equal(a.agent.id);
      // the caller's audio (sipp's) and the agent's browser tone meet: the browser hears the caller side
      await sleep(1500);
      expect((await audioStats(page)).inbound!.packetsReceived).to.be.greaterThan(30);
      await page.click('#hangup');
      await waitPhase(page, 'ended');
      await uas.done;
    } finally {
      sink.close();
      await page.close();
    }
  });

  it('rtpengine killed mid-call: the call ends with a reason within 2 s and the page shows it', async () => {
    const { page, callId } = await ringBrowser([{ type: 'sleep', option: { duration: 30_000 } }], '+15550004444');
    try {
      await waitPhase(page, 'incoming', 15_000);
      await page.click('#answer');
      await waitPhase(page, 'connected');
      await sleep(500);
      const killedAt = Date.now();
      await rtp.kill();
      await waitPhase(page, 'ended', 5000);
      const took = Date.now() - killedAt;
      expect(took, 'ended within 2 s').to.be.at.most(2000);
      const shown = await callText(page);
      // the BYE's Reason header (RFC 3326) says why; before it the page could only say "Terminated"
      expect(shown, shown).to.match(/^Call ended: .*\(media_relay_gone: .+\)$/);
      const db = await testDb();
      const row = await until(
        async () => {
          const c = await db('calls').where({ id: callId }).first();
          return c?.status === 'hangup' ? c : null;
        },
        5000,
        'call row hung up',
      );
      // the platform hung up (its relay leg died), within the 2 s
      expect(row.hangup_by).to.equal('local');
      expect(new Date(row.tm_hangup!).getTime() - killedAt).to.be.at.most(2000);
      console.log(`      page: "${shown}"; call: hangup_by ${row.hangup_by}, hangup_reason ${row.hangup_reason}; ended ${took} ms after the kill`);
    } finally {
      await page.close();
      await rtp.start();
    }
  });
});
