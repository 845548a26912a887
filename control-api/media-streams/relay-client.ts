/**
 * control-api's end of the stream relay: connects to the owning node's relay server and resolves
 * once the node says its tap is open ('ready'), or fails with the ApiError its close code means.
 */
import WebSocket from 'ws';
import { ApiError, serviceUnavailable } from '../../core/errors';
import { relayPath, RELAY_CLOSE, RELAY_READY, RELAY_SECRET_HEADER, type RelayAdvert, type StreamTarget } from '../../core/streams/relay';
import { rawText } from '../../core/net/ws-text';

/** `inboundOnly`: a Twilio stream's relay (the caller's audio alone, digits, clear). */
export function connectRelay(ad: RelayAdvert, target: StreamTarget, id: string, inboundOnly = false, timeoutMs = 5000): Promise<WebSocket> {
  const ws = new WebSocket(ad.url + relayPath(target, id, inboundOnly), {
    headers: { [RELAY_SECRET_HEADER]: ad.secret },
    handshakeTimeout: timeoutMs,
    maxPayload: 64 * 1024,
    perMessageDeflate: false,
  });
  return new Promise<WebSocket>((resolve, reject) => {
    const timer = setTimeout(() => fail(serviceUnavailable('the media node did not answer in time')), timeoutMs);
    const fail = (e: ApiError) => {
      clearTimeout(timer);
      ws.removeAllListeners('message');
      ws.terminate();
      reject(e);
    };
    ws.on('error', () => fail(serviceUnavailable('the media node cannot be reached')));
    ws.on('unexpected-response', (_req, res) => fail(serviceUnavailable(`the media node refused the relay (HTTP ${res.statusCode})`)));
    ws.on('close', (code: number, reason: Buffer) => {
      const why = reason.toString();
      if (code === RELAY_CLOSE.notFound)
        fail(target === 'call' ? new ApiError('CALL_NOT_FOUND', why || 'the call is no longer live') : new ApiError('RESOURCE_NOT_FOUND', why || 'the conference is no longer live'));
      else if (code === RELAY_CLOSE.notReady) fail(new ApiError(target === 'call' ? 'CALL_STATE_INVALID' : 'STATE_INVALID', why || `the ${target} is not progressing`));
      // the node's media backend cannot give it (docs/media-streams.md "On the fsmrf media backend"): a precondition of the deployment, not a retry
      else if (code === RELAY_CLOSE.unsupported) fail(new ApiError(target === 'call' ? 'CALL_STATE_INVALID' : 'STATE_INVALID', why || `the media backend of the ${target}'s node cannot stream it`));
      else fail(serviceUnavailable(why || 'the media node closed the relay'));
    });
    ws.once('message', (data, isBinary) => {
      if (isBinary || rawText(data) !== RELAY_READY) return fail(serviceUnavailable('unexpected relay message'));
      clearTimeout(timer);
      ws.removeAllListeners('close');
      ws.removeAllListeners('error');
      ws.on('error', () => undefined);
      resolve(ws);
    });
  });
}
