// The auth group's own failure style (spec: validation failures inside authentication handlers return a
// bare status code with an empty body), and the JSON body parsing that goes with it.
import express, { type ErrorRequestHandler, type RequestHandler, type Response } from 'express';

export const AUTH_BODY_LIMIT = '16kb';

/** Ends the response with the status and no body at all (Content-Length: 0, no Content-Type). */
export function bare(res: Response, status = 400): void {
  res.status(status).end();
}

/**
 * Parses every body as JSON whatever its Content-Type (voipbin binds JSON regardless; `curl -d` sends
 * form encoding). A parse failure or an oversized body ends the request with a bare 400.
 */
export function bareJsonBody(): RequestHandler[] {
  const parse = express.json({ limit: AUTH_BODY_LIMIT, strict: false, type: () => true });
  const onError: ErrorRequestHandler = (err, _req, res, next) => (isBodyError(err) ? bare(res, 400) : next(err));
  return [parse as RequestHandler, onError as unknown as RequestHandler];
}

/** body-parser's own errors carry a `type` such as entity.parse.failed or entity.too.large. Anything
 * else reaching the handler (an ApiError from the credential middleware before it) passes on. */
function isBodyError(err: unknown): boolean {
  const t = (err as { type?: unknown })?.type;
  return typeof t === 'string' && /^(entity\.|encoding\.|charset\.|request\.)/.test(t);
}

/** Like bareJsonBody, but a broken body becomes `undefined` instead of a 400 (endpoints that always answer 200). */
export function lenientJsonBody(): RequestHandler[] {
  const parse = express.json({ limit: AUTH_BODY_LIMIT, strict: false, type: () => true });
  const onError: ErrorRequestHandler = (err, req, _res, next) => {
    if (!isBodyError(err)) return next(err);
    req.body = undefined;
    next();
  };
  return [parse as RequestHandler, onError as unknown as RequestHandler];
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
