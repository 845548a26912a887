import type { z } from 'zod';
import type * as control from '../../../core/flow/options/control';
import { validateActions } from '../../../core/flow';
import { type ActionContext, FlowTask, type Outcome } from './base';

/**
 * Asks event_url for actions: POST (default) with JSON {activeflow_id, reference_id}, or GET with
 * the same as query parameters. An HTTP 200 with a JSON array of valid actions runs next, then the
 * flow resumes after this action (voipbin pushes a stack). Anything else ends the activeflow with
 * an error saying what was wrong.
 */
export class Fetch extends FlowTask<z.infer<typeof control.fetch>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const method = this.option.event_method ?? 'POST';
    const payload = { activeflow_id: ctx.activeflowId, reference_id: ctx.referenceId };
    let url = this.option.event_url;
    if (method === 'GET') url += (url.includes('?') ? '&' : '?') + new URLSearchParams(payload).toString();
    const res = await ctx.http.request({
      method,
      url,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: method === 'POST' ? JSON.stringify(payload) : undefined,
      timeoutMs: ctx.limits.httpTimeoutMs,
      maxBytes: ctx.limits.maxFetchBytes,
      signal: ctx.signal,
    });
    if (res.status !== 200) return { kind: 'fail', message: `fetch ${this.option.event_url}: HTTP ${res.status}` };
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      return { kind: 'fail', message: `fetch ${this.option.event_url}: response is not JSON` };
    }
    const v = validateActions(body, { field: 'response' });
    if (!v.ok) {
      const p = v.problems[0]!;
      return { kind: 'fail', message: `fetch ${this.option.event_url}: ${p.field}: ${p.message}` };
    }
    return { kind: 'push', actions: v.actions };
  }
}
