// CANCEL (RFC 3261 9): 200 to the CANCEL and 487 to the INVITE, from both sides of the stack.
import { expect } from 'chai';
import { parseMessage, SipResponse, SipStack, SipRequest } from '../../../sip-server/stack';
import { UdpPeer, firstLines, rawRequest, startStack } from './support';
import { attachTestUas } from './test-uas';
import { buildInvite, finalOf } from './test-uac';

describe('CANCEL handling', function () {
  this.timeout(20_000);
  let uas: SipStack;
  beforeEach(async () => {
    uas = await startStack();
  });
  afterEach(async () => {
    await uas.stop();
  });

  it('server side: a CANCEL gets 200, the INVITE gets 487 with the provisional To tag, the TU sees cancelled', async () => {
    const stats = attachTestUas(uas, { answerDelayMs: 5000 });
    const cancelled: SipRequest[] = [];
    uas.on('request', (_req, srv) => srv.on('cancelled', (c: SipRequest) => cancelled.push(c)));
    const peer = await new UdpPeer().bind();
    try {
      const port = uas.listening[0].port;
      const invite = rawRequest('INVITE', '127.0.0.1', peer.port, port, { branch: 'z9hG4bK-cancel-1', callId: 'cancel-1' });
      await peer.send(invite, port);
      await peer.waitFor((m) => firstLines(m).includes('SIP/2.0 180 Ringing'));
      const cancel = invite.replace(/^INVITE /, 'CANCEL ').replace('CSeq: 1 INVITE', 'CSeq: 1 CANCEL');
      await peer.send(cancel, port);
      const msgs = await peer.waitFor((m) => m.some((x) => x.text.startsWith('SIP/2.0 487')) && m.some((x) => /^SIP\/2.0 200[\s\S]*CSeq: 1 CANCEL/.test(x.text)));
      const ringing = parseMessage(msgs.find((x) => x.text.startsWith('SIP/2.0 180'))!.text) as SipResponse;
      const terminated = parseMessage(msgs.find((x) => x.text.startsWith('SIP/2.0 487'))!.text) as SipResponse;
      expect(terminated.toTag).to.equal(ringing.toTag);
      expect(stats.cancels).to.equal(1);
      expect(cancelled).to.have.length(1);
      // a CANCEL for an unknown transaction gets 481
      await peer.send(cancel.replace('z9hG4bK-cancel-1', 'z9hG4bK-unknown'), port);
      await peer.waitFor((m) => firstLines(m).some((l) => l.startsWith('SIP/2.0 481')));
    } finally {
      peer.close();
    }
  });

  it('client side: tx.cancel() before any 1xx waits for one, then the INVITE ends with 487 and the CANCEL with 200', async () => {
    attachTestUas(uas, { answerDelayMs: 5000 });
    const uac = await startStack();
    try {
      const target = `sip:svc@127.0.0.1:${uas.listening[0].port}`;
      const tx = uac.request(buildInvite(uac, target));
      tx.cancel();
      const final = await finalOf(tx);
      expect(final.status).to.equal(487);
      expect(tx.state).to.be.oneOf(['Completed', 'Terminated']);
    } finally {
      await uac.stop();
    }
  });

  it('client side over TCP: cancel after 180', async () => {
    attachTestUas(uas, { answerDelayMs: 5000 });
    const uac = await startStack();
    try {
      const target = `sip:svc@127.0.0.1:${uas.listening[0].port};transport=tcp`;
      const tx = uac.request(buildInvite(uac, target, 'tcp'));
      await new Promise<void>((r) =>
        tx.once('provisional', (res: SipResponse) => {
          if (res.status === 180) r();
          else tx.once('provisional', () => r());
        }),
      );
      tx.cancel();
      expect((await finalOf(tx)).status).to.equal(487);
    } finally {
      await uac.stop();
    }
  });
});
