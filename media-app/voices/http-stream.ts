/** A vendor's chunked HTTP answer through the egress policy, as an async iterable of byte chunks. */
import { EgressFailed, EgressRefused } from '../../core/net';
import { statusError, VoiceError, type VoiceRequest } from './vendor';

/** POSTs `body` (JSON, or a string sent as it is with the content-type in `headers`) and yields the answer's bytes. */
export async function* postStream(vendor: string, url: string, req: VoiceRequest, headers: Record<string, string>, body: unknown): AsyncGenerator<Uint8Array> {
  let res;
  try {
    res = await req.egress.open(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
      timeoutMs: 60_000,
      maxBytes: 16 * 1024 * 1024,
      signal: req.signal,
    });
  } catch (e) {
    throw netError(vendor, e);
  }
  try {
    if (res.status !== 200) throw statusError(vendor, res.status);
    try {
      for await (const chunk of res.body) yield chunk;
    } catch (e) {
      throw netError(vendor, e);
    }
  } finally {
    res.close();
  }
}

export function netError(vendor: string, e: unknown): VoiceError {
  if (e instanceof VoiceError) return e;
  if (e instanceof EgressRefused) return new VoiceError(vendor, 'refused', `the egress policy refused the vendor URL: ${e.message}`);
  if (e instanceof EgressFailed && e.reason === 'aborted') return new VoiceError(vendor, 'timeout', 'cancelled');
  return new VoiceError(vendor, 'failed', 'the vendor could not be reached or did not answer in time');
}
