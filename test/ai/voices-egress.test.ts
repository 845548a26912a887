// The egress policy between the platform and a voice vendor: a vendor URL on a private address (here
// 10.255.255.1, never allowed: only the loopback of the test's own LLM server is opened) is refused
// before any connection, and ai_talk ends with that reason and an aicall_tts_failed event.
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { aisRepo } from '../../core/repos/ais';
import { repos } from '../../core/repos';
import { testDb, truncateAll } from '../../testkit/db';
import { startLlmServer, type LlmServer } from '../../testkit/llm-server';
import { eventsFor, killAllSipp, sipp, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { aiCallerScenario, TimedSink } from '../../testkit/ai/audio';
import { endedActiveflow } from '../../testkit/call-ends';

describe('ai: a voice vendor URL the egress policy refuses', function () {
  this.timeout(120_000);
  let p: Platform;
  let llm: LlmServer;

  before(async () => {
    await truncateAll();
    llm = await startLlmServer();
    llm.options.respond = (req) => (req.messages.some((m) => m.role === 'user') ? { text: '' } : { text: 'Hello there, how can I help?' });
    p = await startPlatform({
      EGRESS_ALLOW_CIDRS: '127.0.0.0/8', // the LLM server only
      CARTESIA_BASE_URL: 'http://10.255.255.1:8080',
      CARTESIA_API_KEY: 'ca-test-key',
      DEEPGRAM_BASE_URL: 'http://10.255.255.1:8081',
      DEEPGRAM_API_KEY: 'dg-test-key',
      AWS_BASE_URL: 'http://10.255.255.1:8082',
      AWS_ACCESS_KEY_ID: 'AKIDEGRESSTEST000000',
      AWS_SECRET_ACCESS_KEY: 'egress-test-secret',
      GOOGLE_BASE_URL: 'http://10.255.255.1:8083',
      GOOGLE_API_KEY: 'gg-test-key',
      RIME_BASE_URL: 'http://10.255.255.1:8084',
      RIME_API_KEY: 'rime-test-key',
      PLAYHT_BASE_URL: 'http://10.255.255.1:8085',
      PLAYHT_USER_ID: 'playht-user',
      PLAYHT_API_KEY: 'playht-test-key',
    });
  });
  after(async () => {
    killAllSipp();
    await p?.close();
    await llm?.close();
  });

  // aws: the SDK's own HTTP handler, given an agent pinned to the checked address
  for (const [i, vendor] of (['cartesia', 'deepgram', 'aws', 'google', 'rime', 'playht'] as const).entries()) {
    it(`${vendor} (${vendor === 'cartesia' ? 'WebSocket' : vendor === 'aws' ? 'AWS SDK' : 'HTTP'}) on a private address: refused, the flow ends with the reason and an event, nothing speaks`, async () => {
      const db = await testDb();
      const cid = (await repos(db).customers.create({ email: `eg${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'eg' })).id;
      await trunksRepo(db).create(cid, `treg${vendor}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
      const ai = await aisRepo(db).create(cid, { name: 'v', init_prompt: 'Greet.', engine_model: 'openai.gpt-test', engine_url: llm.url, tts_type: vendor });
      const flow = await flowsRepo(db).create({
        customer_id: cid,
        actions: parseActions([{ type: 'answer' }, { type: 'ai_talk', option: { assistance_type: 'ai', assistance_id: ai.id, duration: 20 } }, { type: 'hangup' }]),
      });
      const number = `+89933000000${i + 1}`;
      await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
      const sink = await TimedSink.open();
      const started = Date.now();
      try {
        const r = await sipp(aiCallerScenario(`${number}@127.0.0.1:${p.sipPort}`, sink.port, []), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '60s'], { killAfterMs: 70_000 })
          .done;
        expect(r.code, r.errors + r.messages).to.equal(0);
        expect(sink.voicedTimes().length, 'nothing spoken').to.equal(0);
      } finally {
        sink.close();
      }
      // refused at once, not after a connection timeout
      expect(Date.now() - started).to.be.lessThan(15_000);
      const c = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 15_000, 'call hangup');
      const af = await endedActiveflow(c.activeflow_id);
      expect(af.end_reason).to.equal('error');
      expect(af.error).to.include(`${vendor}: the egress policy refused the vendor URL`);
      const aicall = (await db('aicalls').where({ customer_id: cid }))[0];
      const failed = (await eventsFor(p.redis, aicall.id)).find((e) => e.event_type === 'aicall_tts_failed');
      expect(failed?.data).to.include({ tts_type: vendor });
      expect(String(failed?.data.reason)).to.include('egress policy refused');
    });
  }
});
