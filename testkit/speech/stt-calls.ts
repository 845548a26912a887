// The real calls of the STT vendor tests (test/ai/stt-*.test.ts): a platform (sip-server + media-app)
// and the local OpenAI-compatible server; numbers whose flow runs ai_talk with a recogniser, or
// transcribe_start; sipp calls one and plays tones (testkit/ai/audio.ts tonePcap), which the vendor
// stand-ins (tone-stt.ts) name by frequency; then what came of it: the user aimessages, the
// transcripts, the activeflow's end and the aicall's events.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { aisRepo } from '../../core/repos/ais';
import { repos } from '../../core/repos';
import { testDb, truncateAll } from '../db';
import { startLlmServer, lastUser, type LlmServer } from '../llm-server';
import { eventsFor, killAllSipp, sipp, startPlatform, until, type Platform } from '../media-app/harness';
import { aiCallerScenario, speechPcap, tonePcap, TimedSink } from '../ai/audio';

type Db = Awaited<ReturnType<typeof testDb>>;
export type Tones = ({ hz: number; ms: number } | { pauseMs: number })[];

let seq = 0;

export class SttCalls {
  private constructor(
    readonly p: Platform,
    readonly llm: LlmServer,
    private readonly dir: string,
  ) {}

  /** `env`: the platform's; the recognisers read `<VENDOR>_BASE_URL`/`_API_KEY` and the egress settings from process.env. */
  static async start(env: Record<string, string> = {}): Promise<SttCalls> {
    await truncateAll();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stt-calls-'));
    const llm = await startLlmServer();
    // the greeting is silence; a caller's turn is answered and the session handed back to the flow
    llm.options.respond = (req) => (lastUser(req) && req.messages.at(-1)?.role !== 'tool' ? { text: 'Fine.', tool_calls: [{ name: 'stop_service', arguments: {} }] } : { text: '' });
    const p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', ...env });
    return new SttCalls(p, llm, dir);
  }

  async close(): Promise<void> {
    killAllSipp();
    await this.p.close();
    await this.llm.close();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** A number (of a new customer, or `cidIn`'s) whose flow is `actions`. */
  async number(actions: unknown[], cidIn?: string): Promise<{ db: Db; cid: string; number: string }> {
    const db = await testDb();
    const cid = cidIn ?? (await repos(db).customers.create({ email: `stt${Date.now()}${++seq}@example.test`, status: 'active', name: 'stt' })).id;
    await trunksRepo(db).create(cid, `trstt${Date.now()}${++seq}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions(actions) });
    const number = `+8993400${String(++seq).padStart(5, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    return { db, cid, number };
  }

  /** A number whose flow is answer, ai_talk (an AI with `sttType`, `parameter`), hangup. */
  async aiNumber(sttType: string, parameter: Record<string, unknown> = {}, durationSecs = 12, sttLanguage?: string) {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `sttai${Date.now()}${++seq}@example.test`, status: 'active', name: 'stt' })).id;
    const ai = await aisRepo(db).create(cid, {
      name: 'desk',
      init_prompt: 'You listen.',
      engine_model: 'openai.gpt-test',
      engine_url: this.llm.url,
      tool_names: ['all'],
      stt_type: sttType,
      ...(sttLanguage ? { stt_language: sttLanguage } : {}),
      parameter: { min_endpointing_delay_ms: 300, max_endpointing_delay_ms: 1500, ...parameter },
      vad_config: { stop_secs: 0.3 },
    });
    return this.number([{ type: 'answer' }, { type: 'ai_talk', option: { assistance_type: 'ai', assistance_id: ai.id, duration: durationSecs } }, { type: 'hangup' }], cid);
  }

  /** A number whose flow is answer, transcribe_start (`provider`, caller side), a wait, hangup. */
  transcribeNumber(provider: string, waitMs = 6000) {
    return this.number([
      { type: 'answer' },
      { type: 'transcribe_start', option: { provider, language: 'en-US', direction: 'in' } },
      { type: 'sleep', option: { duration: waitMs } },
      { type: 'hangup' },
    ]);
  }

  /**
   * Calls `number` and plays `tones` (or espeak-ng speech) from `atMs` after the answer, until the platform hangs up;
   * `endsEarly`: the platform may hang up before the tones are played (a flow that fails at once);
   * `media`: the SDP's m= line and its attributes instead of PCMU's (`PORT` = the sink's); no tones
   * (`[]`) plays nothing.
   */
  async call(number: string, tones: Tones | { speech: string }, atMs = 1000, endsEarly = false, media?: string): Promise<void> {
    const file = path.join(this.dir, `t${++seq}.pcap`);
    const silent = Array.isArray(tones) && tones.length === 0;
    // espeak-ng speech where the platform's VAD must hear a voice (a pure tone is no speech to it)
    if ('speech' in tones) speechPcap(tones.speech, file, { trailMs: 3000 });
    else if (!silent) tonePcap(tones, file, { trailMs: 3000 });
    const sink = await TimedSink.open();
    try {
      let scenario = aiCallerScenario(`${number}@127.0.0.1:${this.p.sipPort}`, sink.port, silent ? [] : [{ atMs, pcap: file }]);
      if (media) scenario = scenario.replace(/m=audio \d+ RTP\/AVP 0 101\n[\s\S]*?a=sendrecv/, `${media.replace('PORT', String(sink.port))}\na=sendrecv`);
      const r = await sipp(scenario, [`127.0.0.1:${this.p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '60s'], { killAfterMs: 70_000 }).done;
      if (r.code !== 0 && !endsEarly) throw new Error(`sipp failed: ${r.errors}${r.messages}`);
    } finally {
      sink.close();
    }
  }

  /** The call's activeflow once ended, the aicall (if any) and its events. */
  async endOf(db: Db, cid: string) {
    const c = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 15_000, 'call hangup');
    const af = await until(
      async () => ((await db('activeflows').where({ id: c.activeflow_id }).first())?.status === 'ended' ? db('activeflows').where({ id: c.activeflow_id }).first() : null),
      10_000,
      'activeflow ended',
    );
    const aicall = (await db('aicalls').where({ customer_id: cid }))[0] as { id: string } | undefined;
    return { af: af as { end_reason: string; error: string | null }, aicall, events: aicall ? await eventsFor(this.p.redis, aicall.id) : [] };
  }

  /** The caller's messages of the customer's (one) terminated aicall. */
  async userMessages(db: Db, cid: string): Promise<string[]> {
    const aicall = await until(async () => (await db('aicalls').where({ customer_id: cid, status: 'terminated' }))[0], 15_000, 'aicall terminated');
    return ((await db('aimessages').where({ aicall_id: aicall.id, role: 'user' }).orderBy('tm_create')) as { content: string }[]).map((m) => m.content);
  }

  /** The transcripts of the customer's (one) transcribe once it is done. */
  async transcripts(db: Db, cid: string): Promise<{ message: string; direction: string }[]> {
    const t = await until(async () => (await db('transcribes').where({ customer_id: cid, status: 'done' }))[0], 20_000, 'transcribe done');
    return (await db('transcripts').where({ transcribe_id: t.id }).orderBy('offset_ms')) as { message: string; direction: string }[];
  }
}
