/**
 * Outbound HTTP for fetch and webhook_send: a thin use of the egress policy (core/net), which
 * resolves and checks the host, pins the socket to the checked address and bounds time and size.
 * Errors a flow sees never carry the remote answer; the detail goes to the server log.
 */
import type { Logger } from 'pino';
import { EgressFailed, EgressRefused, type EgressPolicy } from '../../core/net';
import { abortError } from './clock';

export interface HttpRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  maxBytes?: number;
  signal?: AbortSignal;
}

export interface HttpResponse {
  status: number;
  body: string;
  /** The answer's Content-Type header ('' when it had none). */
  contentType?: string;
  /** The answer's headers as sent, name and value (a repeated header once per value). */
  headers?: [string, string][];
}

export interface FlowHttp {
  request(req: HttpRequest): Promise<HttpResponse>;
}

/** Why a flow's request did not happen, in words safe to store in the activeflow (no remote answer). */
export class FlowHttpError extends Error {
  constructor(
    message: string,
    readonly refused: boolean,
  ) {
    super(message);
    this.name = 'FlowHttpError';
  }
}

export class PolicyHttp implements FlowHttp {
  constructor(
    private readonly policy: EgressPolicy,
    private readonly logger?: Pick<Logger, 'info'>,
  ) {}

  async request(req: HttpRequest): Promise<HttpResponse> {
    try {
      const res = await this.policy.fetch(req.url, {
        method: req.method,
        headers: req.headers,
        body: req.body,
        timeoutMs: req.timeoutMs,
        maxBytes: req.maxBytes ?? 1024 * 1024,
        signal: req.signal,
      });
      if (res.status >= 400) this.logger?.info({ url: req.url, status: res.status }, 'flow HTTP request answered with an error status');
      const raw = res.rawHeaders ?? [];
      const headers: [string, string][] = [];
      for (let i = 0; i + 1 < raw.length; i += 2) headers.push([raw[i]!, raw[i + 1]!]);
      return { status: res.status, body: res.body.toString('utf8'), contentType: String(res.headers['content-type'] ?? ''), headers };
    } catch (e) {
      if (e instanceof EgressRefused) throw new FlowHttpError(`refused: ${e.message}`, true);
      if (e instanceof EgressFailed) {
        if (e.reason === 'aborted' && req.signal?.aborted) throw abortError(req.signal);
        this.logger?.info({ url: req.url, err: e.message }, 'flow HTTP request failed');
        throw new FlowHttpError(e.message, false);
      }
      throw e;
    }
  }
}
