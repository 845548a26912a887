// ai_talk's recogniser hears the caller at the leg's rate (issue #34): a trunk (sipp) calls a number
// whose flow runs ai_talk with Deepgram (its local protocol server, testkit/speech/deepgram-server.ts,
// which checks the rate it is told against the bytes a second it gets). Offering only G.722, the
// recogniser is connected with sample_rate=16000 and gets 32,000 bytes/s; offering PCMU, 8000.
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { aisRepo } from '../../core/repos/ais';
import { repos } from '../../core/repos';
import { testDb } from '../../testkit/db';
import { type LlmServer } from '../../testkit/llm-server';
import { RtpSink, sipp, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';
import { FakeDeepgram, type DgSession } from '../../testkit/speech/deepgram-server';
import { useDeepgramTurnStack } from '../../testkit/ai/turn-calls';

const KEY = 'dg-ai-wide-key';

describe('ai_talk on a wideband leg: the recogniser gets 16 kHz', function () {
  this.timeout(120_000);
  let p: Platform;
  let llm: LlmServer;
  let dg: FakeDeepgram;
  let seq = 0;
  // the recogniser goes through the egress policy; the stand-in is on loopback
  useDeepgramTurnStack(KEY, undefined, { respond: () => ({ text: '' }) }, (x) => ({ p, llm, dg } = x));

  /** A number whose flow is answer, ai_talk (Deepgram, 3 s), hangup; the call offers `media` only. */
  async function call(media: string): Promise<DgSession> {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `aiw${Date.now()}${seq}@example.test`, status: 'active', name: 'aiw' })).id;
    await trunksRepo(db).create(cid, `aiw${Date.now()}${seq}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const ai = await aisRepo(db).create(cid, { name: 'desk', init_prompt: 'You listen.', engine_model: 'openai.gpt-test', engine_url: llm.url, tool_names: [], stt_type: 'deepgram' });
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'answer' }, { type: 'ai_talk', option: { assistance_type: 'ai', assistance_id: ai.id, duration: 3 } }, { type: 'hangup' }]),
    } as never);
    const number = `+8991300${String(++seq).padStart(5, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    const before = dg.sessions.length;
    const sink = await RtpSink.open();
    try {
      const scenario = uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, '+15551230000', sink.port, { byeTimeoutMs: 30_000 }).replace(
        /m=audio \d+ RTP\/AVP 0 101\n[\s\S]*?a=sendrecv/,
        `${media.replace('PORT', String(sink.port))}\na=sendrecv`,
      );
      const r = await sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 60_000 }).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      sink.close();
    }
    return until(async () => (dg.sessions.length > before && dg.sessions[before]!.closed ? dg.sessions[before] : undefined), 10_000, 'the recogniser stream ended');
  }

  it('a G.722 call: sample_rate=16000 and 32,000 bytes/s reach the recogniser', async () => {
    const s = await call('m=audio PORT RTP/AVP 9 101\na=rtpmap:9 G722/8000\na=rtpmap:101 telephone-event/8000\na=fmtp:101 0-15');
    expect(s.query.get('sample_rate')).to.equal('16000');
    expect(s.rateError).to.equal(null);
    expect(s.byteRate).to.be.within(32000 * 0.8, 32000 * 1.2);
  });

  it('a PCMU call: sample_rate=8000 and 16,000 bytes/s, as before', async () => {
    const s = await call('m=audio PORT RTP/AVP 0 101\na=rtpmap:0 PCMU/8000\na=rtpmap:101 telephone-event/8000\na=fmtp:101 0-15');
    expect(s.query.get('sample_rate')).to.equal('8000');
    expect(s.rateError).to.equal(null);
    expect(s.byteRate).to.be.within(16000 * 0.8, 16000 * 1.2);
  });
});
