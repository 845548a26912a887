/**
 * An AI on a real call, for the chat-model tests (test/ai/llm-*.test.ts): a customer, a trunk, an
 * AI with the given engine settings, a flow [answer, ai_talk | ai_task, ...after] and a number;
 * sipp calls it (no speech: the agent's opening turn drives the model) and the test reads the
 * activeflow, the aicall, its aimessages and events.
 */
import { endedActiveflow } from '../call-ends';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { aisRepo, type AiRow } from '../../core/repos/ais';
import { repos } from '../../core/repos';
import type { Db } from '../../core/db/knex';
import { testDb } from '../db';
import { sipp, until, type Platform } from '../media-app/harness';
import { aiCallerScenario, TimedSink } from './audio';

export interface AiFlowOptions {
  engine_model: string;
  engine_url?: string;
  engine_key?: string;
  parameter?: Record<string, unknown>;
  /** ai_talk (default) or ai_task */
  action?: 'ai_talk' | 'ai_task';
  after?: unknown[];
}

let seq = 0;

export async function aiFlow(o: AiFlowOptions): Promise<{ db: Db; cid: string; ai: AiRow; number: string }> {
  const db = await testDb();
  const n = ++seq;
  const cid = (await repos(db).customers.create({ email: `llm${Date.now()}${n}@example.test`, status: 'active', name: 'llm' })).id;
  await trunksRepo(db).create(cid, `trllm${Date.now()}${n}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  const ai = await aisRepo(db).create(cid, {
    name: 'desk',
    init_prompt: 'You take orders for the shop.',
    engine_model: o.engine_model,
    engine_url: o.engine_url ?? '',
    engine_key: o.engine_key ?? '',
    tool_names: ['all'],
    parameter: o.parameter ?? {},
  });
  const middle = o.action === 'ai_task' ? { type: 'ai_task', option: { assistance_id: ai.id } } : { type: 'ai_talk', option: { assistance_type: 'ai', assistance_id: ai.id, duration: 30 } };
  const flow = await flowsRepo(db).create({
    customer_id: cid,
    actions: parseActions([{ type: 'answer' }, middle, ...((o.after as never[]) ?? [{ type: 'hangup' }])]),
  } as never);
  const number = `+8992200${String(n).padStart(5, '0')}${process.pid % 10}`;
  await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
  return { db, cid, ai, number };
}

/** sipp calls `number` and stays until the platform hangs up; sipp's result and how many voiced packets the caller heard. */
export async function callAi(p: Platform, number: string): Promise<{ code: number | null; errors: string; messages: string; voiced: number }> {
  const sink = await TimedSink.open();
  try {
    const scenario = aiCallerScenario(`${number}@127.0.0.1:${p.sipPort}`, sink.port, []);
    const r = await sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '50s'], { killAfterMs: 60_000 }).done;
    return { ...r, voiced: sink.voicedTimes().length };
  } finally {
    sink.close();
  }
}

/** The call's activeflow once ended, and the aicall. */
export async function endedFlow(
  db: Db,
  cid: string,
): Promise<{ af: { error: string; variables: Record<string, string>; executed_actions: { type: string }[] }; aicall: { id: string; status: string } | undefined }> {
  const call = await until(async () => (await db('calls').where({ customer_id: cid, status: 'hangup' }))[0], 15_000, 'call hangup');
  const af = await endedActiveflow(call.activeflow_id, 15_000);
  const aicall = (await db('aicalls').where({ customer_id: cid }))[0] as { id: string; status: string } | undefined;
  return { af, aicall };
}
