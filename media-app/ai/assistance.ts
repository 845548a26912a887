/** Which AI or team an action names (assistance_type/assistance_id, or the deprecated ai_id), and its session started. */
import { isUnset } from '../../core/flow';
import { AiNotFound, AiSession, type StartOptions } from '../../core/ai/session';
import { LlmError } from '../../core/llm/client';
import type { FlowSide } from './host-actions';
import type { AiService } from './service';

/** The AI or team an action names. */
export type Assistance = { type: 'ai' | 'team'; id: string };

export function assistanceOf(o: { assistance_type?: 'ai' | 'team'; assistance_id?: string; ai_id?: string }): Assistance | null {
  if (!isUnset(o.assistance_id)) return { type: o.assistance_type ?? 'ai', id: o.assistance_id! };
  if (!isUnset(o.ai_id)) return { type: 'ai', id: o.ai_id! };
  return null;
}

/** A start failure the flow should end on with a clear message; other errors rethrow. */
export function startFailure(action: string, e: unknown): string {
  if (e instanceof LlmError || e instanceof AiNotFound) return `${action}: ${(e as Error).message}`;
  throw e;
}

/** What of a flow starting a session reads (the customer, the activeflow, the prompt's ${var}) and writes (svc.aicall.id). */
export type SessionFlow = FlowSide & { readonly activeflowId: string };

/** What a session is of: the action that starts it (for its failure message), its reference, what the host lets the AI do. */
export type SessionRef = Pick<StartOptions, 'referenceType' | 'referenceId' | 'actions' | 'speechToSpeech' | 'aiVersion'> & {
  action: 'ai_talk' | 'ai_task';
  /** the version to run while it is still being read (ai_talk's eval run pin), read beside the AI's row (AiSession.start) */
  versionLookup?: Promise<number | undefined>;
};

/**
 * ai_talk's and ai_task's start: the AI session of `who` on the flow's variables, its id set on the flow
 * (svc.aicall.id); or the message the flow fails with when the AI is missing or its model refuses
 * (startFailure; any other error rethrows).
 */
export async function startSession(svc: Pick<AiService, 'deps'>, flow: SessionFlow, who: Assistance, ref: SessionRef): Promise<AiSession | { failed: string }> {
  const { action, versionLookup, ...of } = ref;
  let session: AiSession;
  try {
    session = await AiSession.start(
      svc.deps,
      {
        customerId: flow.customerId,
        assistanceType: who.type,
        assistanceId: who.id,
        activeflowId: flow.activeflowId,
        variables: flow.vars.snapshot(),
        ...of,
      },
      versionLookup,
    );
  } catch (e) {
    return { failed: startFailure(action, e) };
  }
  flow.vars.set('svc.aicall.id', session.id);
  return session;
}
