/** Turns every error into the spec's envelope (with request_id), and unknown routes into 404 ROUTE_NOT_FOUND. */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError } from '../../core/errors';
import { isTransientDbError } from '../../core/db/retry';

export const routeNotFound: RequestHandler = (req, _res, next) => {
  next(new ApiError('ROUTE_NOT_FOUND', `no route for ${req.method} ${req.path}`));
};

/** Errors raised by body-parser carry `type` and `status`. */
function fromBodyParser(err: { type?: string; status?: number; limit?: number }): ApiError | null {
  switch (err.type) {
    case 'entity.parse.failed':
      return new ApiError('INVALID_JSON_BODY', 'request body is not valid JSON');
    case 'entity.too.large':
      return new ApiError('INVALID_ARGUMENT', `request body exceeds ${err.limit} bytes`, { details: [{ field: 'body', limit_bytes: err.limit }] });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ApiError('INVALID_JSON_BODY', 'unsupported body encoding');
    case 'request.aborted':
      return new ApiError('REQUEST_CANCELED', 'client closed the request');
    default:
      return null;
  }
}

/**
 * Postgres refuses text it cannot store (a NUL byte, invalid UTF-8): SQLSTATE 22021 and 22P05. Such
 * a value came from the client, so it is the client's error, whichever field carried it.
 */
function unstorableText(err: unknown): ApiError | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (code !== '22021' && code !== '22P05') return null;
  return new ApiError('INVALID_ARGUMENT', 'a text value holds a character that cannot be stored (such as NUL)');
}

export const errorHandler: ErrorRequestHandler = (err, req, res, next) => {
  if (res.headersSent) return next(err);
  let apiErr: ApiError;
  if (err instanceof ApiError) apiErr = err;
  else if (isTransientDbError(err)) {
    // the database is restarting or unreachable: a client should retry, not report a bug
    apiErr = new ApiError('SERVICE_UNAVAILABLE', 'the service is briefly unavailable; try again shortly', { headers: { 'Retry-After': '5' } });
    (req.log ?? console).warn({ err: (err as Error).message }, 'database unreachable');
  } else {
    apiErr = fromBodyParser(err ?? {}) ?? unstorableText(err) ?? new ApiError('INTERNAL', 'internal error');
    if (apiErr.reason === 'INTERNAL') (req.log ?? console).error({ err }, 'unhandled error');
  }
  if (apiErr.headers) for (const [k, v] of Object.entries(apiErr.headers)) res.setHeader(k, v);
  res.status(apiErr.http).json(apiErr.toEnvelope(req.requestId ?? ''));
};
