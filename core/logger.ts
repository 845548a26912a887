import pino, { type Logger } from 'pino';

export type { Logger };

/** JSON logs on stdout. Request handlers log through `req.log`, a child carrying `request_id`. */
export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info', name = 'platform'): Logger {
  return pino({
    name,
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['password', '*.password', 'token', '*.token', 'req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
  });
}
