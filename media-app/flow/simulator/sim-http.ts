/**
 * The flow HTTP client of a simulation that sends nothing (every API simulation): fetch and
 * webhook_send see the egress policy's validation-time verdict on the URL (no DNS, no connection),
 * then the script's canned answer for it (`script.http`), or a failure "not sent in a simulation".
 * Each request is written to the timeline as `http_not_sent`.
 */
import type { SimHttpAnswer } from '../../../core/flow/sim-script';
import { EgressRefused, type EgressPolicy } from '../../../core/net';
import { FlowHttpError, type FlowHttp, type HttpRequest, type HttpResponse } from '../../kit/http';
import type { SimTrace } from './sim-call';

export const NOT_SENT = 'not sent in a simulation';

export class SimHttp implements FlowHttp {
  constructor(
    private readonly policy: EgressPolicy,
    private readonly answers: readonly SimHttpAnswer[],
    private trace: SimTrace = () => undefined,
  ) {}

  /** The simulation's timeline writer (known once the simulation starts). */
  attach(trace: SimTrace): void {
    this.trace = trace;
  }

  async request(req: HttpRequest): Promise<HttpResponse> {
    const base = { method: req.method, url: req.url };
    try {
      this.policy.assertUrlSyntax(req.url, 'the URL');
    } catch (e) {
      if (!(e instanceof EgressRefused)) throw e;
      this.trace('http_not_sent', { ...base, refused: e.message });
      throw new FlowHttpError(`refused: ${e.message}`, true);
    }
    const answer = this.answers.find((a) => (!a.method || a.method === req.method) && matches(a.url, req.url));
    if (!answer) {
      this.trace('http_not_sent', { ...base, answer: null });
      throw new FlowHttpError(NOT_SENT, false);
    }
    const status = answer.status ?? 200;
    this.trace('http_not_sent', { ...base, answer: { status } });
    return { status, body: answer.body ?? '' };
  }
}

function matches(pattern: string, url: string): boolean {
  return pattern.endsWith('*') ? url.startsWith(pattern.slice(0, -1)) : url === pattern;
}
