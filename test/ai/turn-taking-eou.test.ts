// The end of a turn with a recogniser that says where utterances end (docs/ai.md "Turn-taking"):
// sipp calls a number whose flow runs ai_talk with Deepgram (its stand-in recognising the phrases
// said, testkit/speech/deepgram-phrases.ts: speech_final after `endpointing` ms of silence, 50 ms
// latency) and `min_endpointing_delay_ms` 600, which the platform asks Deepgram for as its
// `endpointing`. A finished sentence with speech_final ends the turn when the vendor says so, not
// after the platform's own VAD silence on top; a trailing "uh" still waits `max_endpointing_delay_ms`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { aisRepo } from '../../core/repos/ais';
import { repos } from '../../core/repos';
import { testDb } from '../../testkit/db';
import { lastUser, type LlmServer } from '../../testkit/llm-server';
import type { FakeDeepgram } from '../../testkit/speech/deepgram-server';
import { sipp, until, type Platform } from '../../testkit/media-app/harness';
import { aiCallerScenario, speechPcap, TimedSink } from '../../testkit/ai/audio';
import { PhraseRecogniser } from '../../testkit/speech/phrase-recogniser';
import { useDeepgramTurnStack } from '../../testkit/ai/turn-calls';

const KEY = 'dg-eou-key';
const MIN_DELAY_MS = 600;
const MAX_DELAY_MS = 2500;
const LEAD_MS = 200;

describe("ai_talk: the recogniser's end of utterance ends a finished turn", function () {
  this.timeout(150_000);
  let p: Platform;
  let llm: LlmServer;
  let dg: FakeDeepgram;
  let dir: string;
  let seq = 0;
  useDeepgramTurnStack(
    KEY,
    { recogniser: new PhraseRecogniser(['tell me a story', 'and then uh']), latencyMs: 50 },
    { respond: (req) => ({ text: lastUser(req) ? 'Here is a short story for you.' : '' }) },
    (x) => ({ p, llm, dg } = x),
  );
  before(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-eou-'))));
  after(() => dir && fs.rmSync(dir, { recursive: true, force: true }));

  /** The caller says `text` once, 1 s after the answer; returns caller stops → first agent audio and the reply's latency. */
  async function turn(text: string, during?: () => Promise<void>): Promise<{ gapMs: number; heard: string; roles: string[]; latency: Record<string, unknown> }> {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `eou${Date.now()}${++seq}@example.test`, status: 'active', name: 'eou' })).id;
    await trunksRepo(db).create(cid, `treou${Date.now()}${seq}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const ai = await aisRepo(db).create(cid, {
      name: 'desk',
      engine_model: 'openai.gpt-test',
      engine_url: llm.url,
      stt_type: 'deepgram',
      parameter: { min_endpointing_delay_ms: MIN_DELAY_MS, max_endpointing_delay_ms: MAX_DELAY_MS },
    });
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'answer' }, { type: 'ai_talk', option: { assistance_type: 'ai', assistance_id: ai.id, duration: 9 } }, { type: 'hangup' }]),
    } as never);
    const number = `+8991500${String(seq).padStart(5, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    const pcap = path.join(dir, `q${seq}.pcap`);
    const qMs = speechPcap(text, pcap, { leadMs: LEAD_MS, trailMs: 6000 });
    const sink = await TimedSink.open();
    const meanwhile = during?.();
    try {
      const r = await sipp(aiCallerScenario(`${number}@127.0.0.1:${p.sipPort}`, sink.port, [{ atMs: 1000, pcap }]), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '40s'], {
        killAfterMs: 45_000,
      }).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      sink.close();
      await meanwhile;
    }
    const speechEnd = sink.packets[0]!.at + 1000 + LEAD_MS + qMs;
    const first = sink.voicedTimes().find((t) => t > speechEnd);
    expect(first, 'the agent answered').to.not.equal(undefined);
    const aicall = await until(async () => (await db('aicalls').where({ customer_id: cid }))[0] as { id: string } | undefined, 5000, 'the aicall');
    const msgs = (await db('aimessages').where({ aicall_id: aicall.id }).orderBy('tm_create')) as { role: string; content: string; metadata: { latency?: Record<string, unknown> } }[];
    const reply = msgs.find((m) => m.role === 'assistant' && m.metadata?.latency?.end_of_turn_rule);
    expect(reply, JSON.stringify(msgs)).to.not.equal(undefined);
    return { gapMs: first! - speechEnd, heard: msgs.find((m) => m.role === 'user')?.content ?? '', roles: msgs.map((m) => m.role), latency: reply!.metadata.latency! };
  }

  it('"Tell me a story." with speech_final: Deepgram is asked for endpointing = min_endpointing_delay_ms, and no wait of the platform is added', async () => {
    const t = await turn('Tell me a story.');
    expect(t.heard).to.equal('tell me a story');
    expect(t.latency.end_of_turn_rule).to.equal('complete');
    // the per-AI minimum is the vendor's endpointing (before: none asked, Deepgram's 10 ms default)
    expect(dg.sessions.at(-1)!.query.get('endpointing')).to.equal(String(MIN_DELAY_MS));
    // the vendor's 600 ms endpointing + 50 ms latency, not that and the VAD's 600 ms after it
    expect(t.latency.end_of_turn_wait_ms, JSON.stringify(t.latency)).to.be.within(MIN_DELAY_MS - 100, MIN_DELAY_MS + 400);
    expect(t.gapMs, 'caller stops → agent audio').to.be.below(2 * MIN_DELAY_MS + 600);
  });

  it('"And then uh." with speech_final: still waits max_endpointing_delay_ms (a trailing word)', async () => {
    const t = await turn('And then uh.');
    expect(t.heard).to.equal('and then uh');
    expect(t.latency.end_of_turn_rule).to.equal('continuation');
    expect(t.latency.end_of_turn_wait_ms, JSON.stringify(t.latency)).to.be.at.least(MAX_DELAY_MS - 100);
    expect(t.gapMs, 'caller stops → agent audio').to.be.at.least(MAX_DELAY_MS - 100);
  });

  it("the LLM is asked while the caller's words are still being stored: a slow database is not on the way to the answer", async () => {
    // aimessages locked against writes (a real lock in Postgres) from before the caller speaks until
    // about 3 s after: the user message waits for it, the answer must not
    const db = await testDb();
    const t = await turn('Tell me a story.', async () => {
      const trx = await db.transaction();
      try {
        await trx.raw('lock table aimessages in share mode');
        await new Promise((r) => setTimeout(r, 5500));
      } finally {
        await trx.commit();
      }
    });
    expect(t.heard).to.equal('tell me a story');
    expect(t.gapMs, `caller stops → agent audio ${JSON.stringify(t.latency)}`).to.be.below(1500);
    // the conversation is stored in its order all the same
    expect(t.roles).to.deep.equal(['user', 'assistant']);
  });
});
