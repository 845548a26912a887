/**
 * The public provisioning URLs, served WITHOUT /v1.0 and without credentials: the token or the
 * customer secret in the URL is the credential.
 * - `GET /provisioning/extension?token=…[&format=…]`: the extension's configuration in the phone's
 *   format (format=, else the User-Agent; neither naming a supported phone: 400, no credentials).
 * - The same URL as a directory: `/provisioning/extension/{file}?token=…`, or the file appended to
 *   the URL as phones do (`/provisioning/extension?token=…/{file}`): documents.ts, files.ts.
 * - `GET /provisioning/customer/{secret}/{file}`: the customer's DHCP option 66 URL; the MAC in the
 *   file name selects the extension bound to it.
 * - `/provisioning/extension/qr.png` and `/qr.svg` (same token) draw the URL as a QR code.
 * Any missing, malformed, unknown or expired token or secret gets the same empty 400 (VoIPbin
 * addendum); other refusals are the API's error envelope. A valid token or secret of a frozen,
 * expired or deleted account gets the account gate's 403 (ACCOUNT_FROZEN, ACCOUNT_EXPIRED,
 * ACCOUNT_DELETED, as the versioned API): its phones get neither a configuration nor the password.
 * Unlike the API's gate this one fails closed: a failed status lookup is a 500, never a document. Responses may carry the SIP password:
 * never cached, and neither the token, the secret nor the password is logged. Guessing is bounded
 * per IP by a bucket of its own with the unauthenticated /auth tier's figures (10/s, burst 20): 429
 * with Retry-After, empty body.
 */
import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { AppContext } from '../context';
import { ApiError } from '../../core/errors';
import { createLimiter } from '../../core/ratelimit';
import { redeemCustomerProvisioningSecret, redeemProvisioningToken } from '../../core/extensions/provisioning';
import { isPhoneFormat, type PhoneFormat } from './index';
import { answerFetch } from './documents';
import { qrPng, qrSvg } from './qr';
import { statusError } from '../middleware/status-gate';

export function provisioningUrl(publicUrl: string, token: string): string {
  return `${publicUrl}/provisioning/extension?token=${token}`;
}

/** The DHCP option 66 URL of a customer (a directory: phones append their file names). */
export function customerProvisioningUrl(publicUrl: string, secret: string): string {
  return `${publicUrl}/provisioning/customer/${secret}/`;
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

/**
 * `token` and `format` of a token URL, and the file name a phone appended to it (`?token=…/file`,
 * or `&format=…/file` when the URL ended with format); null when malformed (a repeated parameter,
 * two appended names, a bad format).
 */
function tokenQuery(req: Request, pathFile: string | null): { token: unknown; format: PhoneFormat | undefined; file: string | null } | null {
  let file = pathFile;
  const split = (v: unknown): unknown => {
    if (typeof v !== 'string' || !v.includes('/')) return v;
    if (file !== null) return null;
    const at = v.indexOf('/');
    file = v.slice(at + 1);
    return file.includes('/') || file === '' ? null : v.slice(0, at);
  };
  const token = split(req.query.token);
  const format = split(req.query.format);
  if (format !== undefined && !isPhoneFormat(format)) return null;
  return { token, format, file };
}

export function createProvisioningRouter(ctx: AppContext): Router {
  const router = Router();
  router.use(perIpLimit(ctx));

  for (const kind of ['png', 'svg'] as const) {
    router.get(`/extension/qr.${kind}`, async (req, res, next) => {
      try {
        const token = req.query.token;
        const ext = await redeemProvisioningToken(ctx.db, token);
        if (!ext) return bad(res);
        if (!(await standing(ctx, req, res, ext.customer_id))) return;
        const url = provisioningUrl(ctx.config.publicUrl, token as string);
        noStore(res);
        if (kind === 'png') res.type('image/png').send(await qrPng(url));
        else res.type('image/svg+xml').send(await qrSvg(url));
      } catch (e) {
        next(e);
      }
    });
  }

  const byToken =
    (pathFile: (req: Request) => string | null): RequestHandler =>
    async (req, res, next) => {
      try {
        const q = tokenQuery(req, pathFile(req));
        if (!q) return bad(res);
        const ext = await redeemProvisioningToken(ctx.db, q.token);
        if (!ext) return bad(res);
        if (!(await standing(ctx, req, res, ext.customer_id))) return;
        await serve(ctx, req, res, 'token', {
          tokenExtension: ext,
          customerId: ext.customer_id,
          file: q.file,
          format: q.format,
          userAgent: req.get('user-agent'),
          hostHeader: req.get('host'),
        });
      } catch (e) {
        next(e);
      }
    };
  router.get(
    '/extension',
    byToken(() => null),
  );
  router.get(
    '/extension/:file',
    byToken((req) => String(req.params.file)),
  );

  router.get('/customer/:secret/:file', async (req, res, next) => {
    try {
      const customerId = await redeemCustomerProvisioningSecret(ctx.db, req.params.secret);
      if (!customerId) return bad(res);
      const format = req.query.format;
      if (format !== undefined && !isPhoneFormat(format)) return bad(res);
      if (!(await standing(ctx, req, res, customerId))) return;
      await serve(ctx, req, res, 'customer', {
        tokenExtension: null,
        customerId,
        file: String(req.params.file),
        format,
        userAgent: req.get('user-agent'),
        hostHeader: req.get('host'),
      });
    } catch (e) {
      next(e);
    }
  });
  return router;
}

/** Answers the account gate's 403 and returns false when the customer may not be provisioned. */
async function standing(ctx: AppContext, req: Request, res: Response, customerId: string): Promise<boolean> {
  const info = await ctx.statusLookup(customerId);
  // a customer row that is gone answers as a deleted account
  const err = statusError(info ?? { status: 'deleted', tm_deletion_scheduled: null });
  if (!err) return true;
  noStore(res);
  ctx.logger.info({ provisioning: { customer_id: customerId, status: err.http, refused: err.reason } }, 'provisioning fetch refused');
  res.status(err.http).json(err.toEnvelope(req.requestId ?? ''));
  return false;
}

/** The provisioning document the fetch asks for, or the error envelope; each answer logged. */
async function serve(ctx: AppContext, req: Request, res: Response, via: 'token' | 'customer', fetch: Parameters<typeof answerFetch>[2]): Promise<void> {
  const a = await answerFetch(ctx.db, ctx.config.provisioningSip, fetch);
  noStore(res);
  const log = { via, file: fetch.file, format: fetch.format ?? null, user_agent: fetch.userAgent ?? null, customer_id: fetch.customerId };
  if (!a.ok) {
    ctx.logger.info({ provisioning: { ...log, status: a.http, refused: a.message } }, 'provisioning fetch refused');
    const err = new ApiError(a.http === 400 ? 'INVALID_ARGUMENT' : 'FILE_NOT_FOUND', a.message);
    res.status(a.http).json(err.toEnvelope(req.requestId ?? ''));
    return;
  }
  ctx.logger.info({ provisioning: { ...log, format: a.format, status: 200, extension_id: a.extensionId, credentials: a.credentials } }, 'provisioning document served');
  res.set('Content-Type', a.doc.contentType);
  // A file name served is one files.ts matched: letters, digits, '.', '-' only.
  res.set('Content-Disposition', `inline; filename="${fetch.file ?? a.doc.filename}"`);
  res.status(200).send(a.doc.body);
}
