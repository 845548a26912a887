/**
 * The app's WebSocket of a <ConversationRelay>: its host is resolved and checked by the egress policy
 * and the socket connects to that checked address only (no redirects), with X-Twilio-Signature on the
 * upgrade (HMAC-SHA1 of the URL as given, keyed by the customer's AuthToken), as Twilio signs it.
 * Failures are RelayConnectError, in words safe to store (never the remote answer).
 */
import WebSocket from 'ws';
import { EgressRefused, type EgressPolicy } from '../../core/net';
import { twilioSignature } from '../../core/twilio/signature';
import { MAX_APP_MESSAGE } from '../../core/twilio/relay-protocol';

export class RelayConnectError extends Error {}

export async function openRelaySocket(egress: EgressPolicy, url: string, authToken: string, timeoutMs: number): Promise<WebSocket> {
  let checked;
  try {
    checked = await egress.checkDestination(new URL(url).hostname);
  } catch (e) {
    if (e instanceof EgressRefused) throw new RelayConnectError(`the url was refused by the egress policy: ${e.message}`);
    throw new RelayConnectError('the url host could not be resolved');
  }
  const ws = new WebSocket(url, {
    handshakeTimeout: timeoutMs,
    maxPayload: MAX_APP_MESSAGE + 1024,
    lookup: checked.lookup,
    followRedirects: false,
    headers: { 'X-Twilio-Signature': twilioSignature(authToken, url), 'User-Agent': 'openvoice-conversationrelay/1.0' },
  });
  ws.on('error', () => undefined); // 'close' follows
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_r, res) => {
      ws.terminate();
      reject(new RelayConnectError(`the url answered HTTP ${res.statusCode} instead of a WebSocket upgrade`));
    });
    ws.once('close', () => reject(new RelayConnectError('the url could not be connected to')));
  });
  return ws;
}
