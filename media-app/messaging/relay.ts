/**
 * SIP MESSAGE (RFC 3428) between registered extensions of one customer: the sender is authenticated
 * like a call (digest, 407), the Request-URI user names the receiving extension, and the request is
 * relayed to each of its registered contacts until one accepts; the sender gets that final status
 * (404 for an unknown extension, 480 when it is not registered). Nothing is stored: the message
 * records of the API are SMS (docs/transfers.md says why).
 */
import { extensionsRepo } from '../../core/repos/extensions';
import type { CallDeps } from '../call/deps';
import { headerUri } from '../registrar';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import { parseSipUri } from '../kit/sip-uri';
import { identifySource } from '../inbound/source';
import { targetsFor } from '../outbound/targets';

const MAX_BODY = 8192;

interface SentRequest {
  on(event: 'response', fn: (res: { status: number; reason?: string }) => void): void;
}

export function messageRelay(deps: CallDeps) {
  return (req: SrfRequest, res: SrfResponse): void => {
    void relay(deps, req, res).catch((err: Error) => {
      deps.logger.warn({ err: err.message }, 'MESSAGE relay failed');
      if (!res.finalResponseSent) res.send(500);
    });
  };
}

async function relay(deps: CallDeps, req: SrfRequest, res: SrfResponse): Promise<void> {
  const ruri = parseSipUri(req.uri);
  const from = parseSipUri(headerUri(req.get('From')));
  if (!ruri || !from || !ruri.user) return void res.send(400);
  if ((req.body ?? '').length > MAX_BODY) return void res.send(413);
  const source = await identifySource(deps, req, res, from, ruri);
  if (!source) return;
  if (source.kind !== 'extension') return void res.send(403);
  const ext = await extensionsRepo(deps.db).getByExtension(source.customerId, ruri.user);
  if (!ext) return void res.send(404);
  const targets = await targetsFor(deps, source.customerId, { type: 'extension', target: ext.extension });
  if (!targets.length) return void res.send(480);
  const srf = deps.srf as unknown as { request(uri: string, opts: object, cb: (err: Error | null, r: SentRequest) => void): void };
  let last = 480;
  for (const t of targets) {
    last = await new Promise<number>((resolve) => {
      srf.request(
        t.uri,
        {
          method: 'MESSAGE',
          proxy: t.proxy,
          headers: {
            From: `<sip:${source.ext.extension}@${from.host}>`,
            To: `<sip:${ext.extension}@${ext.domain_name}>`,
            'Content-Type': req.get('Content-Type') ?? 'text/plain',
          },
          body: req.body ?? '',
        },
        (err, sent) => {
          if (err) return resolve(503);
          sent.on('response', (r) => resolve(r.status));
        },
      );
    });
    if (last >= 200 && last < 300) break;
  }
  res.send(last);
}
