import { egressPolicyFor } from '../../core/net';
import { PolicyHttp } from '../../media-app/kit/http';
import { simulate, type SimResult, type TimelineEntry } from '../../media-app/flow/simulator/simulate';

export const id = (n: number) => `a0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** The flow tests' receivers listen on loopback: they opt in to it explicitly. */
export const LOOPBACK_HTTP = new PolicyHttp(egressPolicyFor({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }));

export async function sim(actions: unknown[], script: unknown = {}, extra: { on_complete_flow_id?: string } = {}): Promise<SimResult> {
  return simulate({ actions, ...extra }, script, { http: LOOPBACK_HTTP });
}

/** Executed action types, in order, across every activeflow. */
export function executed(r: SimResult): string[] {
  return r.timeline.filter((e) => e.event === 'action').map((e) => e.type as string);
}

/** Media commands (name and time). */
export function media(r: SimResult): { t: number; command: string; [k: string]: unknown }[] {
  return r.timeline.filter((e) => e.event === 'media').map((e) => ({ ...e, command: e.command as string }));
}

export function events(r: SimResult, name: string): TimelineEntry[] {
  return r.timeline.filter((e) => e.event === name);
}

export function first(r: SimResult) {
  const a = r.activeflows[0];
  if (!a) throw new Error('no activeflow');
  return a;
}
