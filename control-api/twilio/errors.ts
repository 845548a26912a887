/**
 * Twilio's REST error shape, `{code, message, more_info, status}`, for everything under /2010-04-01.
 * Our own ApiErrors (raised by the shared call path, the limits, the body parser) are mapped to the
 * Twilio code that fits, else 20001 (4xx) / 20500 (5xx); the message stays ours.
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError, type Reason } from '../../core/errors';
import { isTransientDbError } from '../../core/db/retry';

export class TwilioError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'TwilioError';
  }
}

export const badParam = (message: string, code = 20001) => new TwilioError(400, code, message);
export const notFound = (what: string) => new TwilioError(404, 20404, `The requested resource ${what} was not found`);
export const unauthenticated = () => new TwilioError(401, 20003, 'Authenticate', { 'WWW-Authenticate': 'Basic realm="Twilio API"' });

/** Twilio codes for our reasons; anything else keeps its HTTP status with the generic code. */
const CODES: Partial<Record<Reason, number>> = {
  AUTHENTICATION_REQUIRED: 20003,
  INVALID_CREDENTIALS: 20003,
  ACCOUNT_DELETED: 20005,
  ACCOUNT_EXPIRED: 20005,
  ACCOUNT_FROZEN: 20005,
  PERMISSION_DENIED: 20403,
  RATE_LIMIT_EXCEEDED: 20429,
  ROUTE_NOT_FOUND: 20404,
  RESOURCE_NOT_FOUND: 20404,
  CALL_NOT_FOUND: 20404,
  NUMBER_NOT_FOUND: 20404,
  RECORDING_NOT_FOUND: 20404,
  SERVICE_UNAVAILABLE: 20503,
};

export function fromApiError(e: ApiError): TwilioError {
  const code = CODES[e.reason] ?? (e.http >= 500 ? 20500 : 20001);
  return new TwilioError(e.http, code, e.message, e.headers ?? {});
}

export function twilioErrorBody(e: TwilioError) {
  return { code: e.code, message: e.message, more_info: `https://www.twilio.com/docs/errors/${e.code}`, status: e.status };
}

/** Body-parser failures (form bodies): too large, bad encoding. */
function fromBodyParser(err: unknown): TwilioError | null {
  const type = (err as { type?: unknown } | null)?.type;
  if (type === 'entity.too.large') return badParam('Request body too large');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported' || type === 'entity.parse.failed') return badParam('Request body could not be parsed');
  if (type === 'parameters.too.many') return badParam('Too many parameters');
  return null;
}

export const twilioRouteNotFound: RequestHandler = (req, _res, next) => {
  next(new TwilioError(404, 20404, `The requested resource ${req.path} was not found`));
};

export const twilioErrorHandler: ErrorRequestHandler = (err, req, res, next) => {
  if (res.headersSent) return next(err);
  let t: TwilioError;
  if (err instanceof TwilioError) t = err;
  else if (err instanceof ApiError) t = fromApiError(err);
  else if (isTransientDbError(err)) t = new TwilioError(503, 20503, 'Service unavailable, try again shortly', { 'Retry-After': '5' });
  else {
    t = fromBodyParser(err) ?? new TwilioError(500, 20500, 'Internal server error');
    if (t.status === 500) (req.log ?? console).error({ err }, 'unhandled error (twilio api)');
  }
  for (const [k, v] of Object.entries(t.headers)) res.setHeader(k, v);
  res.status(t.status).json(twilioErrorBody(t));
};
