import type { z } from 'zod';
import type * as control from '../../../core/flow/options/control';
import { validateActions } from '../../../core/flow';
import { FlowHttpError } from '../../kit/http';
import { type ActionContext, FlowTask, type Outcome } from './base';

/** What the activeflow says when the answer was not usable: never the remote status or body (detail: the fetch_failed note). */
export const FETCH_FAILED = 'fetch: the event_url could not be fetched as flow actions';

/**
 * Asks event_url for actions: POST (default) with JSON {activeflow_id, reference_id}, or GET with
 * the same as query parameters. An HTTP 200 with a JSON array of valid actions runs next, then the
 * flow resumes after this action (voipbin pushes a stack). Anything else ends the activeflow with
 * an error: the policy's refusal as it is, any other failure as one generic reason (the remote
 * status, body or validation problem only in the `fetch_failed` note and the server log).
 */
export class Fetch extends FlowTask<z.infer<typeof control.fetch>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const method = this.option.event_method ?? 'POST';
    const payload = { activeflow_id: ctx.activeflowId, reference_id: ctx.referenceId };
    let url = this.option.event_url;
    if (method === 'GET') url += (url.includes('?') ? '&' : '?') + new URLSearchParams(payload).toString();
    const failed = (detail: Record<string, unknown>): Outcome => {
      ctx.note('fetch_failed', { url: this.option.event_url, ...detail });
      return { kind: 'fail', message: FETCH_FAILED };
    };
    let res;
    try {
      res = await ctx.http.request({
        method,
        url,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: method === 'POST' ? JSON.stringify(payload) : undefined,
        timeoutMs: ctx.limits.httpTimeoutMs,
        maxBytes: ctx.limits.maxFetchBytes,
        signal: ctx.signal,
      });
    } catch (e) {
      if (!(e instanceof FlowHttpError)) throw e;
      if (e.refused) return { kind: 'fail', message: `fetch: event_url ${e.message}` };
      return failed({ error: e.message });
    }
    if (res.status !== 200) return failed({ status: res.status });
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      return failed({ problem: 'response is not JSON' });
    }
    const v = validateActions(body, { field: 'response' });
    if (!v.ok) {
      const p = v.problems[0]!;
      return failed({ problem: `${p.field}: ${p.message}` });
    }
    return { kind: 'push', actions: v.actions };
  }
}
