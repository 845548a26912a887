// drachtio-srf applications acting as UAC through our sip-server, against sipp as the callee.
import { expect } from 'chai';
import path from 'node:path';
import { freePort } from '../../../testkit/ports';
import { UdpPeer } from './udp-peer';
import { SCENARIOS, SDP, sipp, sleep, type Server, useServerAndSrf } from './harness';

const scenario = (f: string) => path.join(SCENARIOS, f);

describe('drachtio-srf UAC through sip-server (sipp as callee)', function () {
  this.timeout(30000);
  let s: Server;
  let srf: any;

  useServerAndSrf((x, app) => ((s = x), (srf = app)));

  async function callee(args: string[], transport: 'u1' | 't1' = 'u1') {
    const port = await freePort();
    const run = sipp([...args, '-i', '127.0.0.1', '-p', String(port), '-t', transport]);
    await sleep(300); // let sipp bind
    return { port, done: run.done };
  }

  for (const [transport, label] of [
    ['u1', 'UDP'],
    ['t1', 'TCP'],
  ] as const) {
    it(`createUAC places calls to sipp uas and hangs up with destroy() (${label})`, async () => {
      const calls = 3;
      const uas = await callee(['-sn', 'uas', '-m', String(calls), '-timeout', '15s'], transport);
      const suffix = transport === 't1' ? ';transport=tcp' : '';
      for (let i = 0; i < calls; i++) {
        let sent: any;
        const dialog = await srf.createUAC(
          `sip:bob@127.0.0.1:${uas.port}${suffix}`,
          { localSdp: SDP, callingNumber: '1000' },
          {
            cbRequest: (_err: unknown, req: any) => {
              sent = req;
            },
          },
        );
        expect(dialog.type).to.equal('uac');
        expect(dialog.id).to.equal(`${dialog.sip.callId};from-tag=${dialog.sip.localTag}`);
        expect(dialog.remote.sdp).to.include('m=audio');
        expect(sent.get('From')).to.match(/^<?sip:1000@127\.0\.0\.1:\d+>?;tag=/);
        expect(sent.get('Via')).to.match(new RegExp(`SIP/2.0/${label} 127\\.0\\.0\\.1:${s.sipPort};branch=z9hG4bK`));
        expect(sent.get('Max-Forwards')).to.equal('70');
        expect(sent.get('Contact')).to.be.a('string');
        await dialog.destroy();
      }
      const r = await uas.done;
      expect(r.code, r.errors).to.equal(0);
      expect(s.drachtio.engine.stats().dialogs).to.equal(0);
    });
  }

  for (const [file, code] of [
    ['uas-challenge.xml', 401],
    ['uas-challenge-407.xml', 407],
  ] as const) {
    it(`answers a ${code} challenge with the digest client (right password: connected)`, async () => {
      const uas = await callee(['-sf', scenario(file), '-m', '1', '-timeout', '10s']);
      const dialog = await srf.createUAC(`sip:bob@127.0.0.1:${uas.port}`, { localSdp: SDP, auth: { username: 'alice', password: 'secret123' } });
      expect(dialog.remote.sdp).to.include('m=audio');
      await dialog.destroy();
      const r = await uas.done;
      expect(r.code, r.errors).to.equal(0);
    });
  }

  it('a wrong password ends in the 403 the callee sends', async () => {
    const uas = await callee(['-sf', scenario('uas-challenge.xml'), '-m', '1', '-timeout', '10s']);
    const err = await srf.createUAC(`sip:bob@127.0.0.1:${uas.port}`, { localSdp: SDP, auth: { username: 'alice', password: 'wrong' } }).then(
      () => undefined,
      (e: any) => e,
    );
    expect(err?.status).to.equal(403);
    const r = await uas.done;
    expect(r.code).to.not.equal(0); // the callee scenario counts the bad credentials as a failed call
  });

  it('createUAC with opts.proxy sends to the proxy address and keeps the Request-URI', async () => {
    const port = await freePort();
    const run = sipp(['-sn', 'uas', '-i', '127.0.0.1', '-p', String(port), '-t', 'u1', '-m', '1', '-timeout', '10s'], { trace: true });
    await sleep(300);
    const dialog = await srf.createUAC('sip:carol@far-away.invalid', { localSdp: SDP, proxy: `sip:127.0.0.1:${port}` });
    await dialog.destroy();
    const r = await run.done;
    expect(r.code, r.errors).to.equal(0);
    expect(r.messages).to.match(/INVITE sip:carol@far-away\.invalid SIP\/2\.0/);
  });

  it('req.cancel() on a ringing UAC INVITE: the callee gets the CANCEL, createUAC fails with 487', async () => {
    const peer = await UdpPeer.open(await freePort());
    try {
      const pending = srf
        .createUAC(
          `sip:ring@127.0.0.1:${peer.port}`,
          { localSdp: SDP },
          {
            cbProvisional: () => undefined,
            cbRequest: (_e: unknown, req: any) => {
              setTimeout(() => req.cancel(), 300);
            },
          },
        )
        .then(
          () => undefined,
          (e: any) => e,
        );
      const invite = await peer.request('INVITE');
      peer.send(invite.makeResponse(180, undefined, { toTag: 'callee1' }).toString(), s.sipPort);
      const cancel = await peer.request('CANCEL');
      expect(cancel.topVia?.branch).to.equal(invite.topVia?.branch);
      peer.send(cancel.makeResponse(200, undefined, { toTag: 'callee1' }).toString(), s.sipPort);
      peer.send(invite.makeResponse(487, undefined, { toTag: 'callee1' }).toString(), s.sipPort);
      const err = await pending;
      expect(err?.status).to.equal(487);
      await peer.request('ACK'); // the stack ACKs the 487
      expect(s.drachtio.engine.stats().pendingOutbound).to.equal(0);
    } finally {
      peer.close();
    }
  });

  it('req.cancel() twice before any provisional: one CANCEL goes out on the 180, the echo is that CANCEL, the second cancel is refused', async () => {
    const peer = await UdpPeer.open(await freePort());
    try {
      let sent: any;
      const pending = srf
        .createUAC(
          `sip:ring@127.0.0.1:${peer.port}`,
          { localSdp: SDP },
          {
            cbProvisional: () => undefined,
            cbRequest: (_e: unknown, req: any) => {
              sent = req;
            },
          },
        )
        .then(
          () => undefined,
          (e: any) => e,
        );
      const invite = await peer.request('INVITE');
      while (!sent) await sleep(10);
      const cancelled = (opts: object) => new Promise<{ err: any; req: any }>((resolve) => sent.cancel(opts, (err: any, req: any) => resolve({ err, req })));
      const first = cancelled({ headers: { Reason: 'SIP;cause=487;text="caller left"' } });
      const second = cancelled({});
      const refused = await second;
      expect(refused.err, 'the second cancel').to.be.an('error');
      peer.send(invite.makeResponse(180, undefined, { toTag: 'callee1' }).toString(), s.sipPort);
      const cancel = await peer.request('CANCEL');
      const echo = (await first).req;
      expect(echo.get('Via')).to.equal(cancel.headers.get('Via'));
      expect(echo.get('CSeq')).to.equal(cancel.headers.get('CSeq'));
      expect(echo.get('Reason')).to.equal('SIP;cause=487;text="caller left"').and.equal(cancel.headers.get('Reason'));
      peer.send(cancel.makeResponse(200, undefined, { toTag: 'callee1' }).toString(), s.sipPort);
      peer.send(invite.makeResponse(487, undefined, { toTag: 'callee1' }).toString(), s.sipPort);
      expect((await pending)?.status).to.equal(487);
      await peer.request('ACK');
      await sleep(300);
      expect(peer.received.filter((m) => m.isRequest && (m as { method?: string }).method === 'CANCEL')).to.have.length(1);
    } finally {
      peer.close();
    }
  });

  it('re-INVITE with dialog.modify() and then BYE', async () => {
    const uas = await callee(['-sf', scenario('uas-reinvite.xml'), '-m', '1', '-timeout', '10s']);
    const dialog = await srf.createUAC(`sip:bob@127.0.0.1:${uas.port}`, { localSdp: SDP });
    const answer = await dialog.modify(SDP.replace('a=sendrecv', 'a=sendonly'));
    expect(answer).to.include('m=audio');
    await dialog.destroy();
    const r = await uas.done;
    expect(r.code, r.errors).to.equal(0);
  });

  it('a UAC call to a closed port fails (timeout or ICMP) without leaving state behind', async () => {
    const port = await freePort();
    const err = await srf.createUAC(`sip:nobody@127.0.0.1:${port};transport=tcp`, { localSdp: SDP }).then(
      () => undefined,
      (e: any) => e,
    );
    expect(err?.status).to.be.oneOf([408, 503]);
    expect(s.drachtio.engine.stats().pendingOutbound).to.equal(0);
    expect(s.drachtio.engine.stats().dialogs).to.equal(0);
  });
});
