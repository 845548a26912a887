/** `X-Request-Id` in and out (VoIPbin: echoed if `[A-Za-z0-9_-]{1,64}`, else `req_` + 26 base32). */
import { randomBytes } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from '../../core/logger';

const VALID = /^[A-Za-z0-9_-]{1,64}$/;
const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function newRequestId(): string {
  const bytes = randomBytes(16);
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  return 'req_' + out;
}

export function requestId(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && VALID.test(incoming) ? incoming : newRequestId();
    req.requestId = id;
    req.log = logger.child({ request_id: id });
    res.setHeader('X-Request-Id', id);
    next();
  };
}
