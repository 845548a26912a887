// A tiny UAC on SipStack: INVITE, ACK for the 2xx, BYE. Enough dialog logic for tests only.
import { Headers, SipRequest, SipResponse, SipStack, TransportName, randomToken, ClientTransaction } from '../../../sip-server/stack';

export function buildInvite(stack: SipStack, target: string, transport: TransportName = 'udp'): SipRequest {
  const h = new Headers();
  h.append('From', `<${stack.localUri(transport, 'uac')}>;tag=${randomToken()}`);
  h.append('To', `<${target}>`);
  h.append('Call-ID', `${randomToken(12)}@test`);
  h.append('CSeq', '1 INVITE');
  h.append('Contact', `<${stack.localUri(transport, 'uac')}>`);
  h.append('Content-Type', 'application/sdp');
  return new SipRequest('INVITE', target, h, 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40002 RTP/AVP 0\r\n');
}

/** In-dialog request (ACK/BYE) from an INVITE and its 2xx. */
export function inDialog(invite: SipRequest, res: SipResponse, method: string, seq: number): SipRequest {
  const contact = res.contacts[0];
  const h = new Headers();
  for (const rr of res.headers.getAll('Record-Route').reverse()) h.append('Route', rr);
  h.append('From', invite.headers.get('From')!);
  h.append('To', res.headers.get('To')!);
  h.append('Call-ID', invite.callId);
  h.append('CSeq', `${seq} ${method}`);
  return new SipRequest(method, contact ? contact.uri.toString() : invite.uri, h);
}

/** Place a call: resolves with the final response, after ACKing a 2xx. */
export function call(stack: SipStack, invite: SipRequest, opts: { target?: string } = {}): { tx: ClientTransaction; result: Promise<SipResponse> } {
  const tx = stack.request(invite, opts);
  const result = new Promise<SipResponse>((resolve, reject) => {
    tx.on('final', (res: SipResponse) => {
      if (res.status < 300) tx.ack(inDialog(invite, res, 'ACK', invite.cseq.seq));
      resolve(res);
    });
    tx.on('timeout', () => reject(new Error('INVITE timed out')));
    tx.on('transport-error', (e: Error) => reject(e));
  });
  return { tx, result };
}

export function finalOf(tx: ClientTransaction): Promise<SipResponse> {
  return new Promise((resolve, reject) => {
    tx.on('final', resolve);
    tx.on('timeout', () => reject(new Error(`${tx.request.method} timed out`)));
    tx.on('transport-error', reject);
  });
}
