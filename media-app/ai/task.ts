/**
 * ai_task (services.ai.task): the AI works on a flow's context without audio (conversations, flows
 * without a call). Its input is the conversation's latest message when there is one, else the flow's
 * variables; it may call tools (set_variables, send_message, stop_flow...). The flow action keeps only
 * the flow's part: where the answer lands and what a stop_flow does to the call.
 */
import type { z } from 'zod';
import type * as later from '../../core/flow/options/later';
import type { ActionContext } from '../flow/actions/base';
import { assistanceOf, startSession } from './assistance';
import { flowActions } from './host-actions';
import type { AiService } from './service';

export type AiTaskOption = z.infer<typeof later.ai_task>;

/** What of a flow ai_task reads and writes. */
export type AiTaskFlow = Pick<ActionContext, 'vars' | 'customerId' | 'referenceType' | 'referenceId' | 'activeflowId' | 'clock' | 'signal'>;

/** The session's answer (svc.aicall.id is set on the flow once it started), or why it failed. */
export type AiTaskEnd = { kind: 'done'; result: string; stopFlow: boolean } | { kind: 'fail'; message: string };

export async function aiTask(svc: AiService, flow: AiTaskFlow, option: AiTaskOption): Promise<AiTaskEnd> {
  const who = assistanceOf(option);
  if (!who) return { kind: 'fail', message: 'ai_task: assistance_id (or the deprecated ai_id) is required' };
  const session = await startSession(svc, flow, who, {
    action: 'ai_task',
    referenceType: flow.referenceType === 'conversation' ? 'conversation' : 'task',
    referenceId: flow.referenceId,
    actions: { ...flowActions(flow), stopFlow: async () => 'the flow will stop' },
  });
  if ('failed' in session) return { kind: 'fail', message: session.failed };
  const input = flow.vars.snapshot()['svc.conversation_message.text'] || `Flow variables: ${JSON.stringify(flow.vars.custom())}`;
  try {
    const result = await flow.clock.track(session.replyText(input, flow.signal));
    return { kind: 'done', result, stopFlow: session.endRequest?.kind === 'stop_flow' };
  } catch (e) {
    if (flow.signal.aborted) throw e;
    return { kind: 'fail', message: `ai_task: ${(e as Error).message}` };
  } finally {
    await session.end().catch(() => undefined);
  }
}
