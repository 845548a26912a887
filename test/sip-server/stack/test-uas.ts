// A tiny UAS built directly on SipStack (no dialog layer): answers INVITE with 180 + 200, BYE/OPTIONS with 200.
import { SipStack, randomToken, ServerTransaction, SipRequest } from '../../../sip-server/stack';

const SDP = 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n';

export interface UasOptions {
  /** Delay before the 200 OK (ms); lets a test CANCEL first. */
  answerDelayMs?: number;
  /** Status for INVITE instead of 200. */
  inviteStatus?: number;
}

export function attachTestUas(stack: SipStack, opts: UasOptions = {}): { invites: number; byes: number; acks: number; cancels: number } {
  const stats = { invites: 0, byes: 0, acks: 0, cancels: 0 };
  stack.on('ack', () => {
    stats.acks++;
  });
  stack.on('cancel', () => {
    stats.cancels++;
  });
  stack.on('request', (req: SipRequest, srv: ServerTransaction) => {
    if (req.method === 'INVITE') {
      stats.invites++;
      const tag = randomToken();
      srv.respond(req.makeResponse(180, undefined, { toTag: tag }));
      const answer = (): void => {
        if (srv.finalSent || srv.state === 'Terminated') return; // cancelled, or the stack stopped
        if (opts.inviteStatus && opts.inviteStatus >= 300) {
          srv.respond(req.makeResponse(opts.inviteStatus, undefined, { toTag: tag }));
          return;
        }
        const res = req.makeResponse(200, undefined, { toTag: tag, copyRecordRoute: true });
        res.headers.set('Contact', `<${stack.localUri(req.source!.transport, 'uas')}>`);
        res.headers.set('Content-Type', 'application/sdp');
        res.bodyText = SDP;
        srv.respond(res);
      };
      if (opts.answerDelayMs) setTimeout(answer, opts.answerDelayMs);
      else answer();
      return;
    }
    if (req.method === 'BYE') stats.byes++;
    srv.respond(req.makeResponse(200));
  });
  return stats;
}
