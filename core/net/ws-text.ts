import type { RawData } from 'ws';

/** A WebSocket message as text, whichever of ws's shapes it arrived in (Buffer, ArrayBuffer, fragments). */
export function rawText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString();
  return (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString();
}
