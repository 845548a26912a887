// srf.createB2BUA and srf.proxyRequest between two sipp instances, through our sip-server.
import { expect } from 'chai';
import { freePort } from '../../../testkit/ports';
import { UdpPeer, uaRequest } from './udp-peer';
import path from 'node:path';
import { SCENARIOS, sipp, sleep, type Server, useServerAndSrf } from './harness';

describe('drachtio-srf B2BUA and proxy between two sipp instances', function () {
  this.timeout(40000);
  let s: Server;
  let srf: any;

  useServerAndSrf((x, app) => ((s = x), (srf = app)));

  async function pair(calls: number, transport: 'u1' | 't1' = 'u1') {
    const uasPort = await freePort();
    const uas = sipp(['-sn', 'uas', '-i', '127.0.0.1', '-p', String(uasPort), '-m', String(calls), '-t', transport, '-timeout', '20s'], { trace: true });
    await sleep(300);
    const uacPort = await freePort();
    const start = () => sipp(['-sn', 'uac', `127.0.0.1:${s.sipPort}`, '-i', '127.0.0.1', '-p', String(uacPort), '-m', String(calls), '-r', '5', '-d', '300', '-t', transport, '-timeout', '20s']).done;
    return { uasPort, uas: uas.done, start };
  }

  for (const [transport, label] of [
    ['u1', 'UDP'],
    ['t1', 'TCP'],
  ] as const) {
    it(`createB2BUA bridges sipp uac to sipp uas; the caller's BYE tears down both legs (${label})`, async () => {
      const p = await pair(3, transport);
      const suffix = transport === 't1' ? ';transport=tcp' : '';
      let bridged = 0;
      srf.invite(async (req: any, res: any) => {
        const { uas, uac } = await srf.createB2BUA(req, res, `sip:bob@127.0.0.1:${p.uasPort}${suffix}`, { localSdpB: req.body });
        bridged++;
        uas.on('destroy', () => uac.destroy());
        uac.on('destroy', () => uas.destroy());
      });
      const caller = await p.start();
      const callee = await p.uas;
      expect(caller.code, caller.errors).to.equal(0);
      expect(callee.code, callee.errors).to.equal(0);
      expect(bridged).to.equal(3);
      await sleep(100);
      expect(s.drachtio.engine.stats().dialogs).to.equal(0);
    });
  }

  it('proxyRequest with recordRoute relays the INVITE, ACK and BYE; the app gets the final response', async () => {
    const p = await pair(2);
    const results: any[] = [];
    srf.invite(async (req: any) => {
      results.push(await srf.proxyRequest(req, [`sip:bob@127.0.0.1:${p.uasPort}`], { recordRoute: true }));
    });
    const caller = await p.start();
    const callee = await p.uas;
    expect(caller.code, caller.errors).to.equal(0);
    expect(callee.code, callee.errors).to.equal(0);
    expect(results).to.have.length(2);
    expect(results[0].connected).to.equal(true);
    expect(results[0].finalStatus).to.equal(200);
    // the callee saw our Record-Route and our Via above the caller's
    expect(callee.messages).to.match(new RegExp(`Record-Route: <sip:127\\.0\\.0\\.1:${s.sipPort};lr>`));
    expect(callee.messages).to.match(
      new RegExp(`INVITE sip:bob@127[^\\n]+\\n(?:[^\\n]+\\n)*?Via: SIP/2\\.0/UDP 127\\.0\\.0\\.1:${s.sipPort};branch=z9hG4bK[^\\n]+\\n\\s*Via: SIP/2\\.0/UDP 127\\.0\\.0\\.1:\\d+;branch=z9hG4bK-`),
    );
    await sleep(100);
    expect(s.drachtio.engine.stats().proxies).to.equal(0);
  });

  it('serial proxying moves to the next target when the first gives no provisional in time', async () => {
    const p = await pair(1);
    const dead = await freePort();
    const deadSock = await import('node:dgram').then((d) => d.createSocket('udp4'));
    await new Promise<void>((r) => deadSock.bind(dead, '127.0.0.1', () => r())); // swallows the INVITE silently
    const results: any[] = [];
    srf.invite(async (req: any) => {
      results.push(await srf.proxyRequest(req, [`sip:dead@127.0.0.1:${dead}`, `sip:bob@127.0.0.1:${p.uasPort}`], { provisionalTimeout: '1s' }));
    });
    const caller = await p.start();
    deadSock.close();
    expect(caller.code, caller.errors).to.equal(0);
    expect((await p.uas).code).to.equal(0);
    expect(results[0].finalStatus).to.equal(200);
  });

  it('followRedirects: a 302 from the first target sends the INVITE to its Contact', async () => {
    const p = await pair(1);
    const redirector = await UdpPeer.open(await freePort());
    const results: any[] = [];
    srf.invite(async (req: any) => {
      results.push(await srf.proxyRequest(req, [`sip:old@127.0.0.1:${redirector.port}`], { followRedirects: true }));
    });
    const caller = p.start();
    const inv = await redirector.request('INVITE', 8000);
    const moved = inv.makeResponse(302, undefined, { toTag: 'redir' });
    moved.headers.append('Contact', `<sip:bob@127.0.0.1:${p.uasPort}>`);
    redirector.send(moved.toString(), s.sipPort);
    const r = await caller;
    redirector.close();
    expect(r.code, r.errors).to.equal(0);
    expect((await p.uas).code).to.equal(0);
    expect(results[0].finalStatus).to.equal(200);
    expect(results[0].responses.flatMap((x: any) => x.msgs.map((m: any) => m.status))).to.deep.equal([302, 200]);
  });

  it('simultaneous forking: the 200 from one target wins over the 486 of the other', async () => {
    const p = await pair(1);
    const busy = await UdpPeer.open(await freePort());
    const results: any[] = [];
    srf.invite(async (req: any) => {
      results.push(await srf.proxyRequest(req, [`sip:busy@127.0.0.1:${busy.port}`, `sip:bob@127.0.0.1:${p.uasPort}`], { forking: 'simultaneous' }));
    });
    const caller = p.start();
    const inv = await busy.request('INVITE', 8000);
    busy.send(inv.makeResponse(486, undefined, { toTag: 'busy' }).toString(), s.sipPort);
    const r = await caller;
    busy.close();
    expect(r.code, r.errors).to.equal(0);
    expect((await p.uas).code).to.equal(0);
    expect(results[0].connected).to.equal(true);
  });

  it('a CANCEL from the caller is passed on to the ringing proxy target', async () => {
    const target = await UdpPeer.open(await freePort());
    const results: any[] = [];
    srf.invite(async (req: any) => {
      results.push(await srf.proxyRequest(req, [`sip:ringing@127.0.0.1:${target.port}`]));
    });
    const caller = sipp(['-sf', path.join(SCENARIOS, 'uac-cancel.xml'), `127.0.0.1:${s.sipPort}`, '-i', '127.0.0.1', '-p', String(await freePort()), '-m', '1', '-timeout', '10s']).done;
    try {
      const inv = await target.request('INVITE', 8000);
      target.send(inv.makeResponse(180, undefined, { toTag: 'ring' }).toString(), s.sipPort);
      const cancel = await target.request('CANCEL', 8000);
      expect(cancel.topVia?.branch).to.equal(inv.topVia?.branch);
      target.send(cancel.makeResponse(200, undefined, { toTag: 'ring' }).toString(), s.sipPort);
      target.send(inv.makeResponse(487, undefined, { toTag: 'ring' }).toString(), s.sipPort);
      const r = await caller;
      expect(r.code, r.errors).to.equal(0);
      await target.request('ACK'); // our ACK for the target's 487
      await sleep(100);
      expect(results).to.have.length(1);
      expect(s.drachtio.engine.stats().proxies).to.equal(0);
    } finally {
      target.close();
    }
  });

  // the caller's ACK settles our upstream INVITE transaction (its request is released), and a 2xx the
  // target retransmits after that must still reach the caller
  it('a 2xx the target retransmits after the caller has ACKed is relayed to the caller again', async () => {
    const caller = await UdpPeer.open(await freePort());
    const target = await UdpPeer.open(await freePort());
    try {
      srf.invite((req: any) => srf.proxyRequest(req, [`sip:bob@127.0.0.1:${target.port}`]).catch(() => undefined));
      caller.send(uaRequest('INVITE', s.sipPort, caller.port, { callId: 'px-2xx-again', fromTag: 'c1' }), s.sipPort);
      const inv = await target.request('INVITE', 8000);
      const ok = inv.makeResponse(200, undefined, { toTag: 'tgt' });
      ok.headers.set('Contact', `<sip:bob@127.0.0.1:${target.port}>`);
      target.send(ok.toString(), s.sipPort);
      const up = await caller.response(200, 'INVITE');
      caller.send(uaRequest('ACK', s.sipPort, caller.port, { callId: 'px-2xx-again', fromTag: 'c1', toTag: up.toTag }), s.sipPort);
      await target.request('ACK');
      target.send(ok.toString(), s.sipPort); // the target did not see its ACK in time
      await caller.waitFor((m) => !m.isRequest && caller.received.filter((x) => !x.isRequest && (x as { status?: number }).status === 200).length === 2);
    } finally {
      caller.close();
      target.close();
    }
  });

  it('a proxy target that rejects: the best final response goes back to the caller', async () => {
    const uacPort = await freePort();
    srf.invite((req: any) => srf.proxyRequest(req, [`sip:nobody@127.0.0.1:${s.sipPort}`]).catch(() => undefined));
    srf.options((req: any, res: any) => res.send(200));
    // the target is this server itself with no app for INVITE on the second hop except us: 482 loop or 503
    const r = await sipp(['-sn', 'uac', `127.0.0.1:${s.sipPort}`, '-i', '127.0.0.1', '-p', String(uacPort), '-m', '1', '-timeout', '8s']).done;
    expect(r.code).to.equal(1);
    expect(r.errors).to.match(/SIP\/2\.0 (4|5)\d\d/);
  });
});
