/**
 * The public provisioning URL, served WITHOUT /v1.0 and without credentials: the token is the
 * credential. `GET /provisioning/extension?token=…[&format=…]` answers the phone configuration;
 * `/provisioning/extension/qr.png` and `/qr.svg` (same token) draw the URL as a QR code for a portal.
 * Any missing, malformed, unknown or expired token gets the same empty 400 (VoIPbin addendum).
 * Responses carry the SIP password: never cached. Guessing is bounded per IP by a bucket of its own
 * with the unauthenticated /auth tier's figures (10/s, burst 20): 429 with Retry-After, empty body.
 */
import { Router, type RequestHandler, type Response } from 'express';
import type { AppContext } from '../context';
import { createLimiter } from '../../core/ratelimit';
import { redeemProvisioningToken } from '../../core/extensions/provisioning';
import { formatFromUserAgent, isPhoneFormat, renderConfig } from './index';
import { accountFor } from './target';
import { qrPng, qrSvg } from './qr';

export function provisioningUrl(publicUrl: string, token: string): string {
  return `${publicUrl}/provisioning/extension?token=${token}`;
}

function noStore(res: Response): void {
  res.set('Cache-Control', 'no-store, no-cache, must-revalidate, private, max-age=0');
  res.set('Pragma', 'no-cache');
  res.set('Expires', '0');
  res.set('X-Content-Type-Options', 'nosniff');
  res.set('Referrer-Policy', 'no-referrer');
}

function bad(res: Response): void {
  noStore(res);
  res.status(400).end();
}

function perIpLimit(ctx: AppContext): RequestHandler {
  const limiter = createLimiter(ctx.redis, 'auth_public', { scale: ctx.config.rateLimitScale, prefix: `${ctx.config.redisKeyPrefix}prov:` });
  return (req, res, next) => {
    limiter.consume(req.ip ?? 'unknown').then((r) => {
      if (r.allowed) return next();
      noStore(res);
      res.set('Retry-After', String(r.retryAfterSec)).status(429).end();
    }, next);
  };
}

export function createProvisioningRouter(ctx: AppContext): Router {
  const router = Router();
  const target = ctx.config.provisioningSip;
  router.use(perIpLimit(ctx));

  router.get('/extension', async (req, res, next) => {
    try {
      const format = req.query.format;
      if (format !== undefined && !isPhoneFormat(format)) return bad(res);
      const ext = await redeemProvisioningToken(ctx.db, req.query.token);
      if (!ext) return bad(res);
      const out = renderConfig(format ?? formatFromUserAgent(req.get('user-agent')), accountFor(ext, target));
      noStore(res);
      res.set('Content-Type', out.contentType);
      res.set('Content-Disposition', `inline; filename="${out.filename}"`);
      res.status(200).send(out.body);
    } catch (e) {
      next(e);
    }
  });

  for (const kind of ['png', 'svg'] as const) {
    router.get(`/extension/qr.${kind}`, async (req, res, next) => {
      try {
        const token = req.query.token;
        const ext = await redeemProvisioningToken(ctx.db, token);
        if (!ext) return bad(res);
        const url = provisioningUrl(ctx.config.publicUrl, token as string);
        noStore(res);
        if (kind === 'png') res.type('image/png').send(await qrPng(url));
        else res.type('image/svg+xml').send(await qrSvg(url));
      } catch (e) {
        next(e);
      }
    });
  }
  return router;
}
