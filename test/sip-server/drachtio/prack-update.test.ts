// Reliable provisional responses (RFC 3262 100rel/PRACK) and UPDATE in early dialogs (RFC 3311)
// through sip-server, with drachtio-srf applications on one side and sipp or a bare UDP peer on the other.
import { expect } from 'chai';
import path from 'node:path';
import type { SipResponse } from '../../../sip-server/message';
import { freePort } from '../../../testkit/ports';
import { connectSrf, disconnectSrf, killAllSipp, SCENARIOS, SDP, sipp, sleep, startServer, until, type Server } from './harness';
import { UdpPeer, uaRequest } from './udp-peer';

const scenario = (f: string) => path.join(SCENARIOS, f);
const parseContact = (m: { contacts: { uri: { toString(): string } }[] }) => m.contacts[0].uri.toString();
const SDP_SENDONLY = SDP.replace('a=sendrecv', 'a=sendonly');
const SDP_RECVONLY = SDP.replace('a=sendrecv', 'a=recvonly');

describe('100rel/PRACK and early UPDATE through sip-server', function () {
  this.timeout(30000);
  let s: Server;
  let srf: any;

  async function start(t1 = 500): Promise<void> {
    s = await startServer({ config: { timers: { t1, t2: 4000, t4: 5000 } } });
    srf = await connectSrf(s.drachtioPort);
  }
  afterEach(async () => {
    killAllSipp();
    disconnectSrf(srf);
    await s?.close();
  });

  for (const [transport, label] of [
    ['u1', 'UDP'],
    ['t1', 'TCP'],
  ] as const) {
    it(`UAS: Require: 100rel caller, reliable 183 -> PRACK -> early UPDATE -> 200 -> ACK -> BYE (${label})`, async () => {
      await start();
      const events: string[] = [];
      let rseq = '';
      srf.invite((req: any, res: any) => {
        req.on('update', (ureq: any, ures: any) => {
          events.push(`update:${ureq.body.includes('a=sendonly')}:${ureq.stackDialogId === `${req.get('Call-ID')};from-tag=${req.getParsedHeader('From').params.tag}`}`);
          ures.send(200, { body: SDP_RECVONLY });
          setTimeout(() => {
            srf.createUAS(req, res, { localSdp: SDP }).then(
              (d: any) => {
                d.on('ack', () => events.push('ack'));
                d.on('destroy', () => events.push('destroy'));
              },
              (err: Error) => events.push(`uas-error:${err.message}`),
            );
          }, 100);
        });
        res.send(
          183,
          { headers: { Require: '100rel' }, body: SDP },
          (err: Error | null, msg: any) => {
            if (err) events.push(`183-error:${err}`);
            else rseq = msg.get('RSeq');
          },
          (prack: any) => events.push(`prack:${prack.get('RAck')}`),
        );
      });
      const port = await freePort();
      const r = await sipp(['-sf', scenario('uac-100rel-update.xml'), '-m', '1', '-timeout', '15s', `127.0.0.1:${s.sipPort}`, '-i', '127.0.0.1', '-p', String(port), '-t', transport], {
        trace: !!process.env.SIPP_TRACE,
      }).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
      await until(() => events.includes('destroy'), 3000, 'destroy');
      expect(Number(rseq)).to.be.within(1, 2 ** 31 - 1);
      expect(events).to.deep.equal([`prack:${rseq} 1 INVITE`, 'update:true:true', 'ack', 'destroy']);
      expect(s.drachtio.engine.stats().dialogs).to.equal(0);
    });
  }

  for (const [transport, label] of [
    ['u1', 'UDP'],
    ['t1', 'TCP'],
  ] as const) {
    it(`UAC: createUAC gets a reliable 180, PRACKs it with the right RAck, sends an early UPDATE with SDP (${label})`, async () => {
      await start();
      const port = await freePort();
      const run = sipp(['-sf', scenario('uas-100rel.xml'), '-m', '1', '-timeout', '15s', '-i', '127.0.0.1', '-p', String(port), '-t', transport], { trace: !!process.env.SIPP_TRACE });
      await sleep(300);
      const provisional: any[] = [];
      const updates: number[] = [];
      const suffix = transport === 't1' ? ';transport=tcp' : '';
      const dialog = await srf.createUAC(
        `sip:bob@127.0.0.1:${port}${suffix}`,
        { localSdp: SDP, headers: { Supported: '100rel' } },
        {
          cbProvisional: (res: any) => {
            provisional.push(res);
            // after srf's automatic PRACK, an offer in the early dialog
            setTimeout(() => {
              srf.request('sip:placeholder', { method: 'UPDATE', stackDialogId: res.stackDialogId, body: SDP_SENDONLY }, (err: Error | null, req: any) => {
                if (err) return updates.push(-1);
                req.on('response', (ur: any) => updates.push(ur.status));
              });
            }, 200);
          },
        },
      );
      expect(provisional.map((p) => p.status)).to.deep.equal([180]);
      expect(provisional[0].get('RSeq')).to.equal('1');
      expect(provisional[0].stackDialogId).to.equal(dialog.id);
      expect(updates).to.deep.equal([200]);
      expect(dialog.remote.sdp).to.include('m=audio');
      await sleep(100);
      await dialog.destroy();
      const r = await run.done;
      expect(r.code, r.errors + r.messages).to.equal(0);
      expect(s.drachtio.engine.stats().dialogs).to.equal(0);
    });
  }

  it('UAC: a retransmitted reliable 180 is not PRACKed twice; an UPDATE from the callee in the early dialog is answered by srf', async () => {
    await start();
    const peer = await UdpPeer.open(await freePort());
    try {
      const provisional: number[] = [];
      const call = srf.createUAC(
        `sip:bob@127.0.0.1:${peer.port}`,
        { localSdp: SDP, headers: { Supported: '100rel' } },
        {
          cbProvisional: (res: any) => provisional.push(res.status),
        },
      );
      const inv = await peer.request('INVITE');
      const r180 = inv.makeResponse(180, undefined, { toTag: 'bob1' });
      r180.headers.append('Contact', `<sip:bob@127.0.0.1:${peer.port}>`);
      r180.headers.append('Require', '100rel');
      r180.headers.append('RSeq', '7');
      peer.send(r180.toString(), s.sipPort);
      const prack = await peer.request('PRACK');
      expect(prack.headers.get('RAck')).to.equal(`7 ${inv.cseq.seq} INVITE`);
      expect(prack.cseq.seq).to.equal(inv.cseq.seq + 1);
      expect(prack.uri).to.equal(`sip:bob@127.0.0.1:${peer.port}`);
      expect(prack.toTag).to.equal('bob1');
      peer.send(prack.makeResponse(200).toString(), s.sipPort);
      peer.send(r180.toString(), s.sipPort); // a retransmission: no second PRACK, not passed to srf
      const from = inv.headers.get('From')!;
      const update = [
        `UPDATE ${parseContact(inv)} SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=z9hG4bKupd${Date.now()};rport`,
        `From: ${inv.headers.get('To')};tag=bob1`,
        `To: ${from}`,
        `Call-ID: ${inv.callId}`,
        'CSeq: 50 UPDATE',
        `Contact: <sip:bob@127.0.0.1:${peer.port}>`,
        'Max-Forwards: 70',
        'Content-Type: application/sdp',
        `Content-Length: ${Buffer.byteLength(SDP_SENDONLY)}`,
        '',
        SDP_SENDONLY,
      ].join('\r\n');
      peer.send(update, s.sipPort);
      const u200 = await peer.response(200, 'UPDATE');
      expect(u200.bodyText).to.include('m=audio');
      await sleep(200);
      expect(peer.received.filter((m) => m.isRequest && (m as any).method === 'PRACK')).to.have.length(1);
      const ok = inv.makeResponse(200, undefined, { toTag: 'bob1' });
      ok.headers.append('Contact', `<sip:bob@127.0.0.1:${peer.port}>`);
      ok.headers.append('Content-Type', 'application/sdp');
      ok.bodyText = SDP;
      peer.send(ok.toString(), s.sipPort);
      const dialog = await call;
      expect(provisional).to.deep.equal([180]);
      const ack = await peer.request('ACK');
      expect(ack.cseq.seq).to.equal(inv.cseq.seq);
      const bye = dialog.destroy();
      const byeReq = await peer.request('BYE');
      expect(byeReq.cseq.seq).to.equal(inv.cseq.seq + 2);
      peer.send(byeReq.makeResponse(200).toString(), s.sipPort);
      await bye;
      expect(s.drachtio.engine.stats().dialogs).to.equal(0);
    } finally {
      peer.close();
    }
  });

  describe('with a bare UDP caller', () => {
    let peer: UdpPeer;
    afterEach(() => peer?.close());

    const invite = (callId: string, extra: string[] = ['Supported: 100rel']) => uaRequest('INVITE', s.sipPort, peer.port, { callId, body: SDP, extra });

    it('a lost PRACK: the reliable 183 is retransmitted T1, 2T1, 4T1 ... then the INVITE gets 503 and a held 2xx never goes', async () => {
      await start(50); // 64*T1 = 3.2 s
      peer = await UdpPeer.open(await freePort());
      const ended: string[] = [];
      srf.invite((req: any, res: any) => {
        res.send(183, { headers: { Require: '100rel' }, body: SDP });
        // a 2xx while the answer-carrying 183 is unacknowledged is held for the PRACK (RFC 3262 3)
        srf.createUAS(req, res, { localSdp: SDP }).then(
          (d: any) => d.on('destroy', () => ended.push('destroy')),
          () => ended.push('rejected'),
        );
      });
      peer.send(invite('lost-prack-1'), s.sipPort);
      const final = await peer.response(503, 'INVITE', 6000);
      expect(final.reason).to.equal('Reliable Response Time-Out');
      const r183 = peer.received.filter((m) => !m.isRequest && (m as SipResponse).status === 183);
      // 1 + 6 retransmissions at 50, 150, 350, 750, 1550, 3150 ms; allow for a loaded machine
      expect(r183.length).to.be.within(5, 7);
      expect(new Set(r183.map((m) => m.headers.get('RSeq'))).size).to.equal(1);
      expect(peer.received.some((m) => !m.isRequest && (m as SipResponse).status === 200)).to.equal(false);
      await until(() => ended.length > 0, 2000, 'app told the call ended');
      expect(ended).to.deep.equal(['destroy']);
      expect(s.drachtio.engine.stats().dialogs).to.equal(0);
    });

    // the CANCEL's 487 and its ACK settle the INVITE's transaction (its request is released) while the
    // reliable 183 still waits for its PRACK: the give-up 64*T1 later must find nothing left to answer
    it('a CANCEL while a 2xx waits for the PRACK: 487, and the later PRACK time-out sends nothing', async () => {
      await start(50); // 64*T1 = 3.2 s
      peer = await UdpPeer.open(await freePort());
      srf.invite((_req: any, res: any) => {
        res.send(183, { headers: { Require: '100rel' }, body: SDP });
        res.send(200, { body: SDP });
      });
      const branch = 'z9hG4bK-cancel-held-2xx';
      peer.send(uaRequest('INVITE', s.sipPort, peer.port, { callId: 'cancel-held-1', branch, body: SDP, extra: ['Supported: 100rel'] }), s.sipPort);
      await peer.response(183, 'INVITE');
      peer.send(uaRequest('CANCEL', s.sipPort, peer.port, { callId: 'cancel-held-1', branch }), s.sipPort);
      await peer.response(200, 'CANCEL');
      const terminated = await peer.response(487, 'INVITE');
      peer.send(uaRequest('ACK', s.sipPort, peer.port, { callId: 'cancel-held-1', branch, toTag: terminated.toTag }), s.sipPort);
      await sleep(3600);
      const finals = peer.received.filter((m) => !m.isRequest && m.cseq.method === 'INVITE' && (m as SipResponse).status >= 200);
      expect(finals.map((m) => (m as SipResponse).status)).to.deep.equal([487]);
    });

    it('PRACK with a wrong RAck gets 481; the right one releases the held 200; ACK and BYE end the call', async () => {
      await start();
      peer = await UdpPeer.open(await freePort());
      const events: string[] = [];
      // plain res.send: with createUAS the srf Dialog would take the PRACK and answer it 501 (as it
      // does behind drachtio-server, which also passes the PRACK up after releasing the 2xx)
      srf.invite((_req: any, res: any) => {
        res.send(183, { headers: { Require: '100rel' }, body: SDP });
        res.send(200, { body: SDP });
      });
      srf.prack((req: any, res: any) => {
        events.push(`prack:${req.get('RAck')}`);
        res.send(200);
      });
      srf.bye((_req: any, res: any) => {
        events.push('destroy');
        res.send(200);
      });
      peer.send(invite('held-2xx-1'), s.sipPort);
      const r183 = await peer.response(183, 'INVITE');
      const rseq = Number(r183.headers.get('RSeq'));
      expect(r183.headers.get('Require')).to.include('100rel');
      const toTag = r183.toTag!;
      await sleep(300);
      expect(
        peer.received.some((m) => !m.isRequest && (m as SipResponse).status === 200),
        'no 2xx before the PRACK',
      ).to.equal(false);
      peer.send(uaRequest('PRACK', s.sipPort, peer.port, { callId: 'held-2xx-1', toTag, cseq: 2, extra: [`RAck: ${rseq + 1} 1 INVITE`] }), s.sipPort);
      await peer.response(481, 'PRACK');
      peer.send(uaRequest('PRACK', s.sipPort, peer.port, { callId: 'held-2xx-1', toTag, cseq: 3, extra: [`RAck: ${rseq} 2 INVITE`] }), s.sipPort);
      expect((await peer.waitFor<SipResponse>((m) => !m.isRequest && m.cseq.seq === 3)).status).to.equal(481);
      peer.send(uaRequest('PRACK', s.sipPort, peer.port, { callId: 'held-2xx-1', toTag, cseq: 4, extra: [`RAck: ${rseq} 1 INVITE`] }), s.sipPort);
      await peer.response(200, 'PRACK');
      const ok = await peer.response(200, 'INVITE');
      expect(ok.toTag).to.equal(toTag);
      // a second PRACK for the same response matches nothing any more
      peer.send(uaRequest('PRACK', s.sipPort, peer.port, { callId: 'held-2xx-1', toTag, cseq: 5, extra: [`RAck: ${rseq} 1 INVITE`] }), s.sipPort);
      expect((await peer.waitFor<SipResponse>((m) => !m.isRequest && m.cseq.seq === 5)).status).to.equal(481);
      peer.send(uaRequest('ACK', s.sipPort, peer.port, { callId: 'held-2xx-1', toTag, cseq: 1 }), s.sipPort);
      peer.send(uaRequest('BYE', s.sipPort, peer.port, { callId: 'held-2xx-1', toTag, cseq: 6 }), s.sipPort);
      await peer.response(200, 'BYE');
      await until(() => events.includes('destroy'), 2000, 'destroy');
      expect(events).to.deep.equal([`prack:${rseq} 1 INVITE`, 'destroy']);
      expect(s.drachtio.engine.stats().dialogs).to.equal(0);
    });

    it('a reliable 1xx to a caller without 100rel support is refused to the application', async () => {
      await start();
      peer = await UdpPeer.open(await freePort());
      const errors: string[] = [];
      srf.invite((_req: any, res: any) => {
        res.send(183, { headers: { Require: '100rel' }, body: SDP }, (err: unknown) => {
          errors.push(String(err));
          res.send(480);
        });
      });
      peer.send(invite('no-100rel-1', []), s.sipPort);
      await peer.response(480, 'INVITE');
      expect(errors).to.deep.equal(['Remote endpoint does not support 100rel']);
      expect(peer.received.some((m) => !m.isRequest && (m as SipResponse).status === 183)).to.equal(false);
    });

    it('UPDATE outside any dialog, or with an unknown To tag, gets 481; PRACK without a dialog too', async () => {
      await start();
      peer = await UdpPeer.open(await freePort());
      let reached = 0;
      srf.use((_req: any, _res: any, next: () => void) => {
        reached++;
        next();
      });
      peer.send(uaRequest('UPDATE', s.sipPort, peer.port, { callId: 'upd-1', cseq: 1, body: SDP }), s.sipPort);
      await peer.response(481, 'UPDATE');
      peer.send(uaRequest('UPDATE', s.sipPort, peer.port, { callId: 'upd-2', toTag: 'nosuch', cseq: 1, body: SDP }), s.sipPort);
      expect((await peer.waitFor<SipResponse>((m) => !m.isRequest && m.callId === 'upd-2')).status).to.equal(481);
      peer.send(uaRequest('PRACK', s.sipPort, peer.port, { callId: 'prk-1', toTag: 'nosuch', cseq: 2, extra: ['RAck: 1 1 INVITE'] }), s.sipPort);
      expect((await peer.waitFor<SipResponse>((m) => !m.isRequest && m.callId === 'prk-1')).status).to.equal(481);
      expect(reached).to.equal(0);
    });

    it('UPDATE in a confirmed dialog reaches the application with its SDP', async () => {
      await start();
      peer = await UdpPeer.open(await freePort());
      const offers: boolean[] = [];
      srf.invite(async (req: any, res: any) => {
        const d = await srf.createUAS(req, res, { localSdp: SDP });
        d.on('update', (ureq: any, ures: any) => {
          offers.push(ureq.body.includes('a=sendonly'));
          ures.send(200, { body: SDP_RECVONLY });
        });
      });
      peer.send(invite('upd-confirmed-1', []), s.sipPort);
      const ok = await peer.response(200, 'INVITE');
      const toTag = ok.toTag!;
      peer.send(uaRequest('ACK', s.sipPort, peer.port, { callId: 'upd-confirmed-1', toTag, cseq: 1 }), s.sipPort);
      peer.send(uaRequest('UPDATE', s.sipPort, peer.port, { callId: 'upd-confirmed-1', toTag, cseq: 2, body: SDP_SENDONLY }), s.sipPort);
      const u = await peer.response(200, 'UPDATE');
      expect(u.bodyText).to.include('a=recvonly');
      expect(offers).to.deep.equal([true]);
      peer.send(uaRequest('BYE', s.sipPort, peer.port, { callId: 'upd-confirmed-1', toTag, cseq: 3 }), s.sipPort);
      await peer.response(200, 'BYE');
    });
  });
});
