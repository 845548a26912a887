/** `X-Request-Id` in and out (VoIPbin: echoed if `[A-Za-z0-9_-]{1,64}`, else `req_` + 26 base32). */
import { randomBytes } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from '../../core/logger';

const VALID = /^[A-Za-z0-9_-]{1,64}$/;
const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

// Random bytes drawn from a pooled buffer: one getrandom call per 256 ids instead of one per request.
let pool = Buffer.alloc(0);
let offset = 0;
function random16(): Buffer {
  if (offset + 16 > pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  const b = pool.subarray(offset, offset + 16);
  offset += 16;
  return b;
}

export function newRequestId(): string {
  const bytes = random16();
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

/**
 * Sets req.requestId and the X-Request-Id response header. `req.log` (a pino child carrying
 * request_id) is created on first use: most requests never log.
 */
export function requestId(logger: Logger, requestProto: object): RequestHandler {
  Object.defineProperty(requestProto, 'log', {
    configurable: true,
    get(this: { requestId?: string; _log?: Logger }) {
      return (this._log ??= logger.child({ request_id: this.requestId ?? '' }));
    },
    set(this: { _log?: Logger }, v: Logger) {
      this._log = v;
    },
  });
  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && VALID.test(incoming) ? incoming : newRequestId();
    req.requestId = id;
    res.setHeader('X-Request-Id', id);
    next();
  };
}
