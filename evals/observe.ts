/**
 * What the platform recorded of a simulated call, read once it has settled (the call hung up and
 * every ai_talk on it terminated, or `settleMs` passed, or the run aborted; woken by the platform's
 * events, call-events.ts): the platform's call id (by the caller's
 * SIP Call-ID), the agent's side of the transcript (ai_talk's assistant aimessages, timed from the
 * caller's answer; a ConversationRelay app's replies, relay_lines, timed from the platform's answer) and each agent turn's latency stages (the `metadata.latency` ai_talk writes onto a
 * reply's messages, media-app/ai/turn-latency.ts: one turn per reply, however many messages it spans).
 */
import type { Db } from '../core/db/knex';
import { evalReachRepo, type ReachedMessage } from '../core/repos/eval-reach';
import type { EvalTranscriptLine, EvalTurnResult } from '../core/evals/schema';
import type { RelayLineLoss } from '../core/repos/relay-lines';
import type { CallEvents } from './call-events';

export interface Observed {
  callId: string;
  agentLines: EvalTranscriptLine[];
  /** how many of agentLines are a ConversationRelay app's replies (relay_lines) */
  relayLines: number;
  /** what of the ConversationRelay app's replies was not recorded (relay_line_losses); null: nothing lost */
  relayLoss: RelayLineLoss | null;
  turns: EvalTurnResult[];
}

const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/**
 * The agent's replies in a conversation, one per latency record: ai_talk writes a reply's record onto
 * each of its messages (media-app/ai/turn-latency.ts), so consecutive assistant messages sharing one
 * record are one reply (its first message stands for it); anything else between them starts another.
 * turnsOf and the checks' replies (call-facts.ts) both count replies this way.
 */
export function eachReply(messages: ReachedMessage[]): { message: ReachedMessage; latency: Record<string, unknown> }[] {
  const out: { message: ReachedMessage; latency: Record<string, unknown> }[] = [];
  let last = '';
  for (const m of messages) {
    const latency = m.role === 'assistant' ? (m.metadata.latency as Record<string, unknown> | undefined) : undefined;
    if (!latency) {
      last = '';
      continue;
    }
    const key = JSON.stringify(latency);
    if (key === last) continue;
    last = key;
    out.push({ message: m, latency });
  }
  return out;
}

/** The turns of a conversation: each reply's latency stages (eachReply). */
export function turnsOf(messages: ReachedMessage[]): EvalTurnResult[] {
  return eachReply(messages).map(({ latency }) => {
    const { first_rtp_ms, end_of_turn_wait_ms, stt_final_ms, llm_first_token_ms, tts_first_byte_ms, interrupted, ...rest } = latency as Record<string, number | string | boolean | null>;
    return {
      ...rest,
      latency_ms: num(first_rtp_ms),
      end_of_turn_wait_ms: num(end_of_turn_wait_ms),
      stt_final_ms: num(stt_final_ms),
      llm_first_token_ms: num(llm_first_token_ms),
      tts_first_byte_ms: num(tts_first_byte_ms),
      interrupted: interrupted === true,
    };
  });
}

/**
 * Waits for the call to settle, at most `settleMs` (the only timer) and no longer than the run's
 * `signal`: the records are read again on each of the customer's call/aicall events, never polled.
 * Then reads what the platform recorded, settled or not.
 */
export async function observeCall(deps: { db: Db; events: CallEvents }, customerId: string, sipCallId: string, answeredAt: number, settleMs: number, signal: AbortSignal): Promise<Observed | null> {
  const reach = evalReachRepo(deps.db);
  let woken = false;
  let wake: () => void = () => undefined;
  const watch = deps.events.watch(customerId, () => {
    woken = true;
    wake();
  });
  let deadline: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  let call: Awaited<ReturnType<typeof reach.callBySipCallId>>;
  try {
    let over = false;
    const ended = new Promise<void>((r) => {
      const end = () => {
        over = true;
        r();
      };
      deadline = setTimeout(end, settleMs);
      onAbort = end;
      if (signal.aborted) end();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    // the reader's start counts against the deadline too (a failing Redis rejects here)
    await Promise.race([watch.ready, ended]);
    for (;;) {
      woken = false;
      call = await reach.callBySipCallId(customerId, sipCallId);
      const settled = call?.status === 'hangup' && (await reach.aicallStatuses(customerId, call.id)).every((s) => s === 'terminated');
      if (settled || over) break;
      // an event while reading: read again at once
      if (!woken) await Promise.race([ended, new Promise<void>((r) => (wake = r))]);
    }
  } finally {
    clearTimeout(deadline);
    if (onAbort) signal.removeEventListener('abort', onAbort);
    watch.release();
  }
  if (!call) return null;
  const messages = await reach.aiMessages(customerId, call.id);
  const aiLines = messages.filter((m) => m.role === 'assistant' && m.content.trim()).map((m) => ({ role: 'agent' as const, text: m.content, t_ms: m.tm_create.getTime() - answeredAt }));
  // a ConversationRelay app's replies, timed by the platform from the call's answer (the 200 OK it sent)
  const relay = (await reach.relayLines(customerId, call.id)).map((l) => ({ role: 'agent' as const, text: l.text, t_ms: l.t_ms, interrupted: l.interrupted }));
  const agentLines = [...aiLines, ...relay].sort((a, b) => a.t_ms - b.t_ms);
  return { callId: call.id, agentLines, relayLines: relay.length, relayLoss: await reach.relayLoss(customerId, call.id), turns: turnsOf(messages) };
}
