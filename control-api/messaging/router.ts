/**
 * The SMS provider's callbacks, outside /v1.0 and its credentials: each request is authenticated by
 * the provider's own signature (Twilio: X-Twilio-Signature over PUBLIC_URL + path + form fields).
 * Mount at /hooks/sms (createApp needs one line for it; see the messaging report):
 *   POST /hooks/sms/<provider>/status/<target id>   delivery reports for one target
 *   POST /hooks/sms/<provider>/inbound              messages to our numbers (the number's SMS URL)
 */
import express, { Router, type Request, type Response } from 'express';
import type { AppContext } from '../context';
import { isUuid } from '../../core/ids';
import { handleInbound, handleStatusReport } from '../../core/messaging/callbacks';
import type { ProviderRequest } from '../../core/messaging/provider';
import { messagingDeps } from './deps';

export const SMS_HOOKS_MOUNT = '/hooks/sms';

function providerRequest(ctx: AppContext, req: Request): ProviderRequest {
  const params: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries((req.body ?? {}) as Record<string, unknown>)) {
    if (typeof v === 'string') params[k] = v;
    else if (Array.isArray(v)) params[k] = v.map(String);
  }
  return { url: ctx.config.publicUrl + req.originalUrl, headers: req.headers, params };
}

function refuse(res: Response, status: number, message: string): void {
  res.status(status).type('text/plain').send(message);
}

export function createMessagingCallbackRouter(ctx: AppContext): Router {
  const r = Router();
  r.use(express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 200 }));

  r.post('/:provider/status/:targetId', async (req, res) => {
    const deps = messagingDeps(ctx);
    const provider = deps.provider;
    if (!provider || provider.name !== req.params.provider) return refuse(res, 404, 'unknown provider');
    const pr = providerRequest(ctx, req);
    if (!provider.verify(pr)) return refuse(res, 403, 'bad signature');
    if (!isUuid(req.params.targetId)) return refuse(res, 404, 'unknown message');
    const report = provider.parseStatus(pr.params);
    if (!report) return refuse(res, 400, 'not a status report');
    const outcome = await handleStatusReport(deps, req.params.targetId.toLowerCase(), report);
    if (outcome === 'unknown_target') return refuse(res, 404, 'unknown message');
    res.status(204).end();
  });

  r.post('/:provider/inbound', async (req, res) => {
    const deps = messagingDeps(ctx);
    const provider = deps.provider;
    if (!provider || provider.name !== req.params.provider) return refuse(res, 404, 'unknown provider');
    const pr = providerRequest(ctx, req);
    if (!provider.verify(pr)) return refuse(res, 403, 'bad signature');
    const sms = provider.parseInbound(pr.params);
    if (!sms) return refuse(res, 400, 'not an inbound message');
    const result = await handleInbound(deps, provider.name, sms);
    if (!result) return refuse(res, 404, 'not one of our numbers');
    const reply = provider.inboundReply();
    res.status(200).type(reply.contentType).send(reply.body);
  });

  // Anything else here is a provider misconfiguration: say so plainly (no JSON envelope: providers log text).
  r.use((_req, res) => refuse(res, 404, 'not found'));
  return r;
}
