// media-app on the fsmrf backend losing its switch after start-up (media-app/media-server/fsmrf/
// switch-link.ts): while the event socket is gone, OPTIONS (the edge's readiness probe) and a new
// INVITE get 503 "Media Server Unavailable"; once media-app has connected again, OPTIONS gets 200.
import { expect } from 'chai';
import { once } from 'node:events';
import type net from 'node:net';
import { MEDIA_DOWN_REASON } from '../../media-app/app';
import { FsmrfBackend } from '../../media-app/media-server/fsmrf/backend';
import { startPlatform, UdpSip, type Platform } from '../../testkit/media-app/harness';

const SDP = ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'm=audio 40000 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', ''].join('\r\n');

describe('media-app on the fsmrf backend: the switch lost after start-up', function () {
  this.timeout(60_000);
  let p: Platform;
  let n = 0;

  before(async () => {
    p = await startPlatform({ MEDIA_SERVER_RECONNECT_MIN_MS: '500', MEDIA_SERVER_RECONNECT_MAX_MS: '500' }, { mediaServer: 'fsmrf' });
  });

  after(async () => {
    await p?.close();
  });

  /** One request from a socket of its own (an unacknowledged INVITE's 503 is sent again: never read as a later reply). */
  const request = async (method: 'OPTIONS' | 'INVITE') => {
    n++;
    const u = await UdpSip.open();
    const body = method === 'INVITE' ? SDP : '';
    return u
      .request(
        [
          `${method} sip:+8991000099@127.0.0.1:${p.sipPort} SIP/2.0`,
          `Via: SIP/2.0/UDP 127.0.0.1:${u.port};branch=z9hG4bK-loss${n}-${Date.now()};rport`,
          `From: <sip:probe@127.0.0.1>;tag=loss${n}`,
          `To: <sip:+8991000099@127.0.0.1>`,
          `Call-ID: loss-${u.port}-${n}@127.0.0.1`,
          `CSeq: 1 ${method}`,
          `Contact: <sip:probe@127.0.0.1:${u.port}>`,
          'Max-Forwards: 70',
          ...(body ? ['Content-Type: application/sdp'] : []),
          `Content-Length: ${body.length}`,
          '',
          body,
        ].join('\r\n'),
        p.sipPort,
      )
      .finally(() => u.close());
  };
  const reason = (raw: string) => /^SIP\/2\.0 \d{3} (.*)$/m.exec(raw)?.[1];

  it('OPTIONS and a new INVITE get 503 while it is gone; OPTIONS 200 once reconnected', async () => {
    const backend = p.app.media as FsmrfBackend;
    expect(backend).to.be.instanceOf(FsmrfBackend);
    expect((await request('OPTIONS')).status).to.equal(200);
    const down = once(backend.link, 'down');
    // the switch's end of media-app's event socket reset (the channel sockets have a session; this one none)
    for (const l of p.switch!.sw.esl.connections) if (!(l as unknown as { session: unknown }).session) (l as unknown as { socket: net.Socket }).socket.destroy();
    await down;
    const options = await request('OPTIONS');
    expect(options.status).to.equal(503);
    expect(reason(options.raw)).to.equal(MEDIA_DOWN_REASON);
    const invite = await request('INVITE');
    expect(invite.status).to.equal(503);
    expect(reason(invite.raw)).to.equal(MEDIA_DOWN_REASON);
    expect(invite.headers.find(([k]) => k === 'retry-after')?.[1]).to.equal('30');
    await once(backend.link, 'up');
    expect((await request('OPTIONS')).status).to.equal(200);
  });
});
