/**
 * JSON body parsing with a size limit. Bodies must be application/json (spec conventions 1); a
 * non-empty body of another type is refused, an absent body reads as `{}`.
 */
import express, { type RequestHandler } from 'express';
import { ApiError } from '../../core/errors';

export function jsonBody(limitBytes: number): RequestHandler {
  const parse = express.json({ limit: limitBytes, strict: true, type: ['application/json', 'application/*+json'] });
  return (req, res, next) => {
    const len = req.headers['content-length'];
    const hasBody = (len !== undefined && len !== '0') || req.headers['transfer-encoding'] !== undefined;
    if (!hasBody) {
      req.body = undefined;
      return next();
    }
    if (!req.is(['application/json', 'application/*+json'])) {
      return next(new ApiError('INVALID_JSON_BODY', 'request body must be application/json'));
    }
    parse(req, res, next);
  };
}
