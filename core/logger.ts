import pino, { type Logger } from 'pino';
import { logIds } from './tracing';

export type { Logger };

/**
 * JSON logs on stdout, or on `destination` (a test that reads what was logged). Request handlers log
 * through `req.log`, a child carrying `request_id`. A line written inside a traced span carries its
 * `trace_id` and `span_id` (core/tracing; nothing when off).
 */
export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info', name = 'platform', destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    name,
    level,
    base: { pid: process.pid },
    mixin: logIds,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['password', '*.password', 'token', '*.token', 'req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
