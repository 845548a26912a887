// Calls that hear which cloud voice spoke: a customer with a trunk, a number whose flow runs ai_talk
// (an AI with a given tts_type) or any actions (talk), sipp calling it with an RTP sink that names the
// marker tone of each voiced packet (testkit/vendors/marker.ts), and the flow's end read back.
// Shared by test/ai/voices-<vendor>.test.ts and test/speech/talk-vendor.test.ts.
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { aisRepo } from '../../core/repos/ais';
import { repos } from '../../core/repos';
import { testDb, truncateAll } from '../db';
import { startLlmServer, type LlmServer } from '../llm-server';
import { eventsFor, killAllSipp, sipp, startPlatform, until, type Platform } from '../media-app/harness';
import { MARKER_HZ, type StandIn, type StandInVendor } from '../vendors/marker';
import { aiCallerScenario, TimedSink } from './audio';

type Db = Awaited<ReturnType<typeof testDb>>;
export const MARKER_FREQS: readonly number[] = Object.values(MARKER_HZ);

export class VoiceCalls {
  private seq = 0;

  /** `numberPrefix`: 8 digits after '+' that no other test file uses (numbers are unique per database). */
  constructor(
    private readonly platform: () => Platform,
    private readonly numberPrefix: string,
  ) {}

  /** A customer with a trunk from loopback and a number whose flow is `actions`. */
  async numberFor(actions: unknown[]): Promise<{ db: Db; cid: string; number: string }> {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `vc${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'vc' })).id;
    await trunksRepo(db).create(cid, `trvc${Date.now()}${this.seq}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions(actions) });
    const number = `+${this.numberPrefix}${String(++this.seq).padStart(4, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    return { db, cid, number };
  }

  /** A number whose flow is [answer, ai_talk with an AI speaking through `tts`, hangup]. */
  async aiNumber(llmUrl: string, tts: string, parameter: Record<string, unknown> = {}): Promise<{ db: Db; cid: string; number: string }> {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `va${Date.now()}${Math.random()}@example.test`, status: 'active', name: 'va' })).id;
    await trunksRepo(db).create(cid, `trva${Date.now()}${this.seq}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const ai = await aisRepo(db).create(cid, { name: 'voice', init_prompt: 'Greet the caller.', engine_model: 'openai.gpt-test', engine_url: llmUrl, tool_names: ['all'], tts_type: tts, parameter });
    const flow = await flowsRepo(db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'answer' }, { type: 'ai_talk', option: { assistance_type: 'ai', assistance_id: ai.id, duration: 30 } }, { type: 'hangup' }]),
    });
    const number = `+${this.numberPrefix}${String(++this.seq).padStart(4, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    return { db, cid, number };
  }

  /** Calls the number until the platform hangs up; how many voiced packets carried each marker tone ('none': other sound). */
  async call(number: string): Promise<Map<number | 'none', number>> {
    const p = this.platform();
    const sink = await TimedSink.open();
    try {
      const r = await sipp(aiCallerScenario(`${number}@127.0.0.1:${p.sipPort}`, sink.port, []), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '60s'], { killAfterMs: 70_000 })
        .done;
      expect(r.code, r.errors + r.messages).to.equal(0);
      return sink.dominantTones(MARKER_FREQS);
    } finally {
      sink.close();
    }
  }

  /** The customer's call's activeflow once it has ended, and the events published for it. */
  async flowEnd(db: Db, cid: string): Promise<{ af: { end_reason: string; error: string; id: string }; events: { event_type: string; data: Record<string, unknown> }[] }> {
    const c = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 15_000, 'call hangup');
    const af = await until(
      async () => ((await db('activeflows').where({ id: c.activeflow_id }).first())?.status === 'ended' ? db('activeflows').where({ id: c.activeflow_id }).first() : null),
      10_000,
      'activeflow ended',
    );
    return { af, events: await eventsFor(this.platform().redis, af.id) };
  }

  /** The flow's end and the aicall's events (ai_talk). */
  async aiEnd(db: Db, cid: string): Promise<{ af: { end_reason: string; error: string }; events: { event_type: string; data: Record<string, unknown> }[] }> {
    const { af } = await this.flowEnd(db, cid);
    const aicall = (await db('aicalls').where({ customer_id: cid }))[0];
    return { af, events: await eventsFor(this.platform().redis, aicall.id) };
  }
}

/** Packets of all tones heard (voiced packets, whatever they carried). */
export const heardPackets = (tones: Map<number | 'none', number>): number => [...tones.values()].reduce((a, b) => a + b, 0);

export interface VendorVoiceSuite {
  vendor: StandInVendor;
  /** the stand-in, started before the platform */
  start(o: { firstByteMs: number }): Promise<StandIn>;
  /** the platform's settings that point at the stand-in and hold its key */
  env(standIn: StandIn): Record<string, string>;
  /** an AI's own key the stand-in refuses, and what the flow's error then says */
  wrongKey: string;
  refusal: string;
  /** `+` and 8 digits no other test file uses */
  numberPrefix: string;
}

/**
 * The tests every cloud voice passes on a live call (sipp): its marker tone is heard, and nothing
 * else; an AI's own wrong key ends the flow with a clear error naming the vendor (the key not in it)
 * and an aicall_tts_failed event, with nothing spoken by another voice. Returns the stand-in and
 * platform for a file's own tests.
 */
export function vendorVoiceSuite(s: VendorVoiceSuite, more?: (ctx: { standIn: () => StandIn; calls: VoiceCalls; llmUrl: () => string }) => void): void {
  describe(`ai: the ${s.vendor} voice on a live call`, function () {
    this.timeout(120_000);
    let p: Platform;
    let llm: LlmServer;
    let standIn: StandIn;
    const calls = new VoiceCalls(() => p, s.numberPrefix);

    before(async () => {
      await truncateAll();
      llm = await startLlmServer();
      llm.options.respond = (req) => (req.messages.some((m) => m.role === 'user') ? { text: '' } : { text: GREETING, tool_calls: [{ name: 'stop_service', arguments: {} }] });
      standIn = await s.start({ firstByteMs: 100 });
      p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', ...s.env(standIn) });
    });
    after(async () => {
      killAllSipp();
      await p?.close();
      await llm?.close();
      await standIn?.close();
    });

    it(`the greeting is spoken by ${s.vendor} (its marker tone heard on the call), nothing else`, async () => {
      const before = standIn.requests.length;
      const { db, cid, number } = await calls.aiNumber(llm.url, s.vendor);
      const tones = await calls.call(number);
      const mine = tones.get(MARKER_HZ[s.vendor]) ?? 0;
      expect(mine, `packets with ${s.vendor}'s tone (${JSON.stringify([...tones])})`).to.be.greaterThan(50);
      for (const f of MARKER_FREQS) if (f !== MARKER_HZ[s.vendor]) expect(tones.get(f) ?? 0, `${f} Hz`).to.equal(0);
      expect(tones.get('none') ?? 0, 'no espeak-ng speech').to.be.lessThan(5);
      expect(standIn.requests.length).to.be.greaterThan(before);
      const { af } = await calls.aiEnd(db, cid);
      expect(af.end_reason, af.error).to.not.equal('error');
    });

    it('a refused key: the flow ends with a clear error naming the vendor and an aicall_tts_failed event; nothing speaks', async () => {
      const { db, cid, number } = await calls.aiNumber(llm.url, s.vendor, { tts_key: s.wrongKey });
      const tones = await calls.call(number);
      expect(heardPackets(tones), JSON.stringify([...tones])).to.equal(0);
      const { af, events } = await calls.aiEnd(db, cid);
      expect(af.end_reason).to.equal('error');
      expect(af.error).to.include(`${s.vendor}: ${s.refusal}`);
      expect(af.error).to.not.include(s.wrongKey.slice(-8));
      const failed = events.find((e) => e.event_type === 'aicall_tts_failed');
      expect(failed?.data).to.include({ tts_type: s.vendor });
      expect(String(failed?.data.reason)).to.include(s.refusal);
      expect(JSON.stringify(failed?.data)).to.not.include(s.wrongKey);
    });

    more?.({ standIn: () => standIn, calls, llmUrl: () => llm.url });
  });
}

const GREETING = 'Hello, thank you for calling the shop. How can I help you today?';
