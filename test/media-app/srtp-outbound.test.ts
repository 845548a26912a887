// Outbound SRTP: a plain caller (trunk) dials a PSTN number whose provider has media_encryption sdes;
// the platform's offer to the provider goes through rtpengine as SDES-SRTP, the provider's SRTP comes
// from a second real rtpengine (testkit/srtp-far-end.ts). Each side hears the other's tone.
import { sipProvider } from '../../testkit/providers';
import { expect } from 'chai';
import { repos } from '../../core/repos';
import { trunksRepo } from '../../core/repos/trunks';
import { routesRepo } from '../../core/repos/routes';
import { addBalance, ensureBillingAccount } from '../../core/billing';
import { testDb, truncateAll } from '../../testkit/db';
import { ownNumber } from './originating';
import { Rtpengine } from '../../testkit/rtpengine';
import { SipPeer, type SipMsg } from '../support/sip-peer';
import { SrtpFarEnd, plainSdp } from '../../testkit/srtp-far-end';
import { RtpParty } from '../../testkit/conference/party';
import { startPlatform, until, type Platform } from '../../testkit/media-app/harness';

describe('media-app: outbound SRTP / DTLS to a provider with media_encryption', function () {
  this.timeout(60_000);
  let rtpA: Rtpengine;
  let rtpB: Rtpengine;
  let p: Platform;
  let caller: SipPeer;
  let provider: SipPeer;

  before(async () => {
    await truncateAll();
    [rtpA, rtpB] = await Promise.all([Rtpengine.create(), Rtpengine.create()]);
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RTPENGINE_NG: rtpA.ng });
    [caller, provider] = await Promise.all([SipPeer.open(), SipPeer.open()]);
  });
  after(async () => {
    caller?.close();
    provider?.close();
    await p?.close();
    await Promise.all([rtpA?.dispose(), rtpB?.dispose()]);
  });

  let providerId = '';
  before(async () => {
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `so${Date.now()}@example.test`, status: 'active', name: 'so' })).id;
    await trunksRepo(db).create(cid, `so${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const prov = await sipProvider(db, `127.0.0.1:${provider.port}`, 'srtp', { media_encryption: 'sdes' });
    providerId = prov.id;
    await routesRepo(db).create({ customer_id: cid, name: 'r', detail: '', provider_id: prov.id, priority: 1, target: 'all' });
    await repos(db).outboundConfigs.create({ customer_id: cid, destination_whitelist: ['us'] });
    await addBalance(db, (await ensureBillingAccount(db, cid)).id, 1_000_000, `srtp:${cid}`);
    await ownNumber(db, cid, { number: '+15550001111' }); // the trunk's caller id is the customer's (core/calls/caller-id)
  });

  const offered = { sdes: /m=audio \d+ RTP\/SAVP [\s\S]*a=crypto:\d+ \w+ inline:/, dtls: /m=audio \d+ UDP\/TLS\/RTP\/SAVPF [\s\S]*a=fingerprint:[\s\S]*a=ice-ufrag:/ };
  for (const enc of ['sdes', 'dtls'] as const) {
    it(`media_encryption ${enc}: the provider is offered ${enc === 'sdes' ? 'SDES-SRTP' : 'DTLS-SRTP + ICE'}; audio flows both ways between the plain caller and it`, async () => {
      await (await testDb())('providers').where({ id: providerId }).update({ media_encryption: enc });
      const far = new SrtpFarEnd({ host: '127.0.0.1', port: rtpB.ngPort });
      const [a, b] = await Promise.all([RtpParty.open(440), RtpParty.open(660)]);
      let offerSeen: SipMsg | null = null;
      provider.onInvite(async (invite) => {
        offerSeen = invite;
        const r = await far.answerOffer(invite.body, b.port);
        b.sendTo({ address: r.rtp.host, port: r.rtp.port });
        return { status: 200, sdp: r.sdp };
      });
      try {
        const call = await caller.invite(`+15557650123@127.0.0.1`, p.sipPort, plainSdp(a.port), '+15550001111');
        const to = /^m=audio (\d+)/m.exec(call.remoteSdp)![1];
        expect(call.remoteSdp, 'the plain caller gets plain RTP')
          .to.match(/RTP\/AVP/)
          .and.not.match(/a=crypto/);
        a.sendTo({ address: '127.0.0.1', port: Number(to) });
        expect(offerSeen!.body, `the provider is offered ${enc}`).to.match(offered[enc]);
        // a second of steady tone each way (the bridge forms once both legs are up)
        // ... with more than 20 of the 50 frames of that second arrived (one window, sampled until it holds: the machine is shared)
        const heard = () => b.presence(440, Date.now() - 1000) > 0.8 && a.presence(660, Date.now() - 1000) > 0.8 && b.framesBetween(Date.now() - 1000) > 20;
        await until(() => heard(), 6000, 'each side hearing the other for a second').catch(() => {
          const since = Date.now() - 1000;
          throw new Error(
            `the SRTP provider hears the caller: ${b.presence(440, since)} (${b.framesBetween(since)} frames), the caller hears the provider: ${a.presence(660, since)}` +
              `\n-- platform's rtpengine:\n${rtpA.log.slice(-1500)}\n-- provider's rtpengine:\n${rtpB.log.slice(-1500)}`,
          );
        });
        expect(await call.bye()).to.equal(200);
      } finally {
        a.close();
        b.close();
        await far.close();
      }
    });
  }
});
