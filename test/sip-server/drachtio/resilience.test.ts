// A call through a drachtio-srf application survives a request flood from one source and a burst of
// malformed datagrams from another; the server keeps answering legitimate traffic afterwards.
import { expect } from 'chai';
import dgram from 'node:dgram';
import { freePort } from '../../../testkit/ports';
import { connectSrf, disconnectSrf, killAllSipp, SDP, sipp, sleep, startServer, type Server } from './harness';
import { UdpPeer, uaRequest } from './udp-peer';

async function socketOn(address: string): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => s.bind(0, address, () => resolve()));
  return s;
}

describe('drachtio: flood and malformed datagrams while a call is up', function () {
  this.timeout(40000);
  let s: Server;
  let srf: any;

  beforeEach(async () => {
    s = await startServer({
      config: { security: { uaBlocklist: ['friendly-scanner'], allowlist: [], rateLimit: { requestsPerSecond: 50, burst: 100, banThreshold: 100, banSeconds: 60 } } },
    });
    srf = await connectSrf(s.drachtioPort);
  });
  afterEach(async () => {
    killAllSipp();
    disconnectSrf(srf);
    await s.close();
  });

  it('the call completes, the flooder is cut off, the server still answers others', async () => {
    let optionsAnswered = 0;
    const established: string[] = [];
    srf.options((req: any, res: any) => {
      optionsAnswered++;
      res.send(200);
    });
    srf.invite(async (req: any, res: any) => {
      const d = await srf.createUAS(req, res, { localSdp: SDP });
      established.push(d.id);
    });

    // a 4-second call (-d 4000) from 127.0.0.1
    const uacPort = await freePort();
    const call = sipp(['-sn', 'uac', `127.0.0.1:${s.sipPort}`, '-i', '127.0.0.1', '-p', String(uacPort), '-m', '1', '-d', '4000', '-timeout', '20s']).done;
    await sleep(800);
    expect(established).to.have.length(1);

    // flood: 3000 OPTIONS from 127.0.0.2 as fast as the socket takes them
    const flooder = await socketOn('127.0.0.2');
    let floodReplies = 0;
    flooder.on('message', () => {
      floodReplies++;
    });
    const fport = flooder.address().port;
    for (let i = 0; i < 3000; i++) {
      const msg = uaRequest('OPTIONS', s.sipPort, fport, { callId: `flood-${i}`, branch: `z9hG4bKflood${i}` }).replace(/127\.0\.0\.1:(\d+);branch/, '127.0.0.2:$1;branch');
      flooder.send(msg, s.sipPort, '127.0.0.1');
      if (i % 200 === 0) await sleep(5);
    }
    // malformed: 500 datagrams of garbage and broken SIP from 127.0.0.3
    const junk = await socketOn('127.0.0.3');
    for (let i = 0; i < 500; i++) {
      const kind = i % 4;
      const data =
        kind === 0
          ? Buffer.from([0, 1, 2, 3, 255, 254, i & 255])
          : kind === 1
            ? Buffer.from(`INVITE sip:x@y SIP/2.0\r\nVia: garbage\r\nContent-Length: 99999\r\n\r\n`)
            : kind === 2
              ? Buffer.from('SIP/2.0 200 OK\r\n\r\n')
              : Buffer.from(`OPTIONS  SIP/2.0\r\nCall-ID: ${'x'.repeat(2000)}\r\n\r\n`);
      junk.send(data, s.sipPort, '127.0.0.1');
    }

    const r = await call;
    expect(r.code, r.errors).to.equal(0);
    flooder.close();
    junk.close();

    // the flooder got only part of its requests answered before the limiter stepped in
    expect(floodReplies).to.be.lessThan(3000);
    expect(optionsAnswered).to.be.lessThan(3000);

    // a well-behaved client is still served, by the app
    const peer = await UdpPeer.open(await freePort());
    try {
      const before = optionsAnswered;
      peer.send(uaRequest('OPTIONS', s.sipPort, peer.port, { callId: 'after-flood' }), s.sipPort);
      await peer.response(200, 'OPTIONS', 5000);
      expect(optionsAnswered).to.equal(before + 1);
    } finally {
      peer.close();
    }
    expect(s.drachtio.engine.stats().dialogs).to.equal(0);
  });
});
