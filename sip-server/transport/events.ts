// What every transport reports to the TransportLayer (event name → listener arguments), for
// EventEmitter<…>: a wrong event name or payload is a compile error.
import type { SourceInfo } from '../message';

export interface TransportEvents {
  /** one SIP message (a datagram, a framed stream message, a WebSocket message) */
  message: [data: Buffer, src: SourceInfo];
  /** a stream or WebSocket message that could not be framed; the connection is closed */
  'frame-error': [reason: string, src: SourceInfo];
  /** a listening socket failed */
  error: [err: Error];
}
