/**
 * The checks on what the platform recorded of the call: tool_called (an assistant message's tool
 * call by name, its arguments a superset of the ones given), ended_by (the call's hangup_by: `local`
 * is the platform, i.e. the agent, `remote` the caller) and transferred (a transfer of the call that
 * did not fail, or a leg dialled for it that answered: a connect, ai_talk's connect_call).
 */
import type { EvalCheckResult } from '../../core/evals/schema';
import type { CallFacts } from './facts';

const show = (v: unknown, n = 160) => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > n ? `${s.slice(0, n)}…` : s;
};

/** `want` is found in `got`: equal scalars, an object's every key matching (others may be more), arrays of the same length matching element by element. */
export function subsetMatch(want: unknown, got: unknown): boolean {
  if (want === null || typeof want !== 'object') return want === got;
  if (Array.isArray(want)) return Array.isArray(got) && got.length === want.length && want.every((w, i) => subsetMatch(w, got[i]));
  if (!got || typeof got !== 'object' || Array.isArray(got)) return false;
  const g = got as Record<string, unknown>;
  return Object.entries(want).every(([k, v]) => Object.hasOwn(g, k) && subsetMatch(v, g[k]));
}

export function toolCalled(name: string, args: Record<string, unknown> | undefined, f: CallFacts): EvalCheckResult {
  const type = 'tool_called';
  const named = f.toolCalls.filter((c) => c.name === name);
  if (!named.length) {
    const all = f.toolCalls.map((c) => c.name);
    return { type, passed: false, evidence: all.length ? `no call of ${name} among ${all.length} tool call(s): ${all.join(', ')}` : `no tool was called (looking for ${name})` };
  }
  const hit = named.find((c) => args === undefined || subsetMatch(args, c.arguments));
  if (hit) return { type, passed: true, evidence: `${name} called at ${hit.t_ms} ms with ${show(hit.arguments)}` };
  return { type, passed: false, evidence: `${name} called ${named.length} time(s), none with arguments matching ${show(args)}: ${named.map((c) => show(c.arguments)).join(', ')}` };
}

export function endedBy(by: 'agent' | 'caller', f: CallFacts): EvalCheckResult {
  const type = 'ended_by';
  const end = f.callEnd;
  if (!end?.hangup_by) return { type, passed: false, evidence: 'the call has no hangup recorded' };
  const who = end.hangup_by === 'local' ? 'agent' : end.hangup_by === 'remote' ? 'caller' : null;
  return { type, passed: who === by, evidence: `the call's record: hung up by ${who ?? end.hangup_by} (hangup_by ${end.hangup_by}, hangup_reason ${end.hangup_reason || 'normal'})` };
}

export function transferred(f: CallFacts): EvalCheckResult {
  const type = 'transferred';
  const end = f.callEnd;
  if (!end) return { type, passed: false, evidence: 'the call was not found' };
  const where = (a: { type?: string; target?: string }) => `${a.type ?? '?'} ${a.target ?? ''}`.trim();
  const seen = [
    ...end.transfers.map((t) => `transfer ${t.id} (${t.type}, ${t.status}) to ${t.transferee_addresses.map(where).join(', ') || 'nobody'}`),
    ...end.connected.map((c) => `${c.answered ? 'connected to' : 'dialled, never answered:'} call ${c.id} (${where(c.destination)})`),
  ];
  if (!seen.length) return { type, passed: false, evidence: 'no transfer of the call and no leg it was connected to' };
  const done = end.transfers.some((t) => t.status !== 'failed') || end.connected.some((c) => c.answered);
  return { type, passed: done, evidence: seen.join('; ') };
}
