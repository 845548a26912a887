// SRTP and WebRTC media through rtpengine (media-app/rtpengine): the far end's encryption comes from a
// second real rtpengine (testkit/srtp-far-end.ts), its plain side is an RTP party on loopback
// whose tone the platform's echo flow sends back: heard back means both directions carried audio.
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { repos } from '../../core/repos';
import { testDb, truncateAll } from '../../testkit/db';
import { Rtpengine } from '../../testkit/rtpengine';
import { SipPeer } from '../support/sip-peer';
import { SrtpFarEnd, plainSdp, type FarEndProfile } from '../../testkit/srtp-far-end';
import { RtpParty } from '../../testkit/conference/party';
import { sleep, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { buildTestApp } from '../../testkit/api';
import { freePort } from '../../testkit/ports';
import request from 'supertest';
import { Client } from 'rtpengine-client';
import type { HangupEvent } from '../../media-app/call/session';
import type { TrunkRow } from '../../core/repos/trunks';

let seq = 0;

/** A customer with an IP trunk for 127.0.0.1 and a number whose flow answers and echoes. */
async function echoNumber(opts: { trunkEncryption?: TrunkRow['media_encryption'] } = {}): Promise<{ number: string; customerId: string }> {
  const db = await testDb();
  const tag = `${Date.now()}${++seq}`;
  const cid = (await repos(db).customers.create({ email: `srtp${tag}@example.test`, status: 'active', name: 'srtp' })).id;
  const trunk = await trunksRepo(db).create(cid, `srtp${tag}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  if (opts.trunkEncryption) await db('trunks').where({ id: trunk.id }).update({ media_encryption: opts.trunkEncryption });
  const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions([{ type: 'answer' }, { type: 'echo', option: { duration: 30_000 } }]) } as never);
  const number = `+8991${String(Date.now()).slice(-6)}${seq}`;
  await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
  return { number, customerId: cid };
}

/** rtpengine's own log: the ng commands it received. */
const ngCommands = (r: Rtpengine, cmd: string) => (r.log.match(new RegExp(`Received command '${cmd}'`, 'g')) ?? []).length;

describe('media-app: SRTP and WebRTC legs through rtpengine', function () {
  this.timeout(60_000);
  let rtpA: Rtpengine; // the platform's
  let rtpB: Rtpengine; // the far end's SRTP stack
  let p: Platform;
  let peer: SipPeer;

  before(async () => {
    await truncateAll();
    // A forgets a deleted call at once (default: 30 s later), so an out-of-band delete plays its own timeout
    [rtpA, rtpB] = await Promise.all([Rtpengine.create({ args: ['--delete-delay=0'] }), Rtpengine.create()]);
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RTPENGINE_NG: rtpA.ng });
    peer = await SipPeer.open();
  });
  after(async () => {
    peer?.close();
    await p?.close();
    await Promise.all([rtpA?.dispose(), rtpB?.dispose()]);
  });

  async function callWithTone(profile: FarEndProfile, number: string) {
    const party = await RtpParty.open(440);
    const far = new SrtpFarEnd({ host: '127.0.0.1', port: rtpB.ngPort });
    const offer = await far.offer(profile, party.port);
    const call = await peer.invite(`${number}@127.0.0.1`, p.sipPort, offer, '+15550001111');
    const to = await far.answered(call.remoteSdp);
    party.sendTo({ address: to.host, port: to.port });
    return { party, far, call, offer };
  }

  /** The live call whose media goes through rtpengine, once there is one. */
  const relayedCall = () =>
    until(
      () =>
        p.app.calls
          .all()
          .map((c) => p.app.factory.get(c.id))
          .find((c) => c?.relay),
      5000,
      'relayed call',
    );

  /** callWithTone, then `body`; the party and the far end are closed whatever happens. */
  async function withToneCall(profile: FarEndProfile, number: string, body: (c: Awaited<ReturnType<typeof callWithTone>>) => Promise<void>): Promise<void> {
    const c = await callWithTone(profile, number);
    try {
      await body(c);
    } finally {
      c.party.close();
      await c.far.close();
    }
  }

  it('an SDES-SRTP trunk call carries audio both ways; the engine sees plain RTP; the relay is deleted at the end', async () => {
    const { number } = await echoNumber();
    await withToneCall('sdes', number, async ({ party, call, offer }) => {
      expect(offer)
        .to.match(/RTP\/SAVP/)
        .and.match(/a=crypto:/);
      expect(call.remoteSdp, 'the answer to the caller is SDES-SRTP')
        .to.match(/m=audio \d+ RTP\/SAVP /)
        .and.match(/a=crypto:\d+ \w+ inline:/);
      const live = await relayedCall();
      expect(live!.endpoint!.local.sdp, 'the engine speaks plain RTP')
        .to.match(/RTP\/AVP/)
        .and.not.match(/a=crypto/);
      // a second of the caller's own tone heard back: the echo went through SRTP both ways
      await until(() => party.presence(440, Date.now() - 1000) > 0.7 && party.framesBetween(Date.now() - 1000) > 20, 6000, 'tone heard back');
      const deletes = ngCommands(rtpA, 'delete');
      expect(await call.bye()).to.equal(200);
      await until(() => p.app.calls.size === 0, 5000, 'call gone');
      await until(() => ngCommands(rtpA, 'delete') > deletes, 3000, 'relay deleted');
    });
  });

  it('re-INVITEs on a relayed leg go through rtpengine: hold (sendonly) is answered recvonly, unhold brings the audio back', async () => {
    const { number } = await echoNumber();
    await withToneCall('sdes', number, async ({ party, far, call }) => {
      await until(() => party.presence(440, Date.now() - 1000) > 0.7 && party.framesBetween(Date.now() - 1000) > 20, 6000, 'tone back before hold');
      const holdAnswer = await call.reinvite(await far.offer('sdes', party.port, 'sendonly'));
      expect(holdAnswer, 'hold answered through rtpengine')
        .to.match(/RTP\/SAVP/)
        .and.match(/a=(recvonly|inactive)/);
      await far.answered(holdAnswer);
      const unhold = await call.reinvite(await far.offer('sdes', party.port, 'sendrecv'));
      expect(unhold)
        .to.match(/RTP\/SAVP/)
        .and.not.match(/a=(recvonly|sendonly|inactive)/);
      const to = await far.answered(unhold);
      party.sendTo({ address: to.host, port: to.port });
      const resumed = Date.now();
      await until(() => party.presence(440, Date.now() - 1000) > 0.7 && party.framesBetween(resumed) > 20, 6000, 'tone back after unhold');
      expect(await call.bye()).to.equal(200);
    });
  });

  it('a DTLS-SRTP + ICE offer (WebRTC profile) connects with audio both ways', async () => {
    const { number } = await echoNumber();
    await withToneCall('dtls', number, async ({ party, call }) => {
      expect(call.remoteSdp)
        .to.match(/UDP\/TLS\/RTP\/SAVPF/)
        .and.match(/a=fingerprint:/)
        .and.match(/a=ice-ufrag:/);
      await until(() => party.presence(440, Date.now() - 1000) > 0.7 && party.framesBetween(Date.now() - 1000) > 20, 8000, 'tone heard back through DTLS-SRTP both ways');
      expect(await call.bye()).to.equal(200);
    });
  });

  it('a plain SIP call keeps the direct path: no ng traffic', async () => {
    const { number } = await echoNumber();
    const offers = ngCommands(rtpA, 'offer');
    const party = await RtpParty.open(440);
    try {
      const call = await peer.invite(`${number}@127.0.0.1`, p.sipPort, plainSdp(party.port));
      expect(call.remoteSdp).to.match(/RTP\/AVP/);
      const live = p.app.calls
        .all()
        .map((c) => p.app.factory.get(c.id))
        .find(Boolean);
      expect(live?.relay ?? null).to.equal(null);
      expect(await call.bye()).to.equal(200);
      expect(ngCommands(rtpA, 'offer'), 'no offer reached rtpengine').to.equal(offers);
    } finally {
      party.close();
    }
  });

  it('an SRTP offer with a malformed a=crypto gets 488', async () => {
    const { number } = await echoNumber();
    const bad = plainSdp(40000).replace('RTP/AVP', 'RTP/SAVP').replace('a=sendrecv', 'a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:@@not-base64@@\r\na=sendrecv');
    const err = await peer.invite(`${number}@127.0.0.1`, p.sipPort, bad).then(
      () => null,
      (e: { status?: number }) => e,
    );
    expect(err?.status).to.equal(488);
  });

  it('a trunk with media_encryption sdes refuses a plain offer with 488 and takes an SDES one', async () => {
    const { number } = await echoNumber({ trunkEncryption: 'sdes' });
    const err = await peer.invite(`${number}@127.0.0.1`, p.sipPort, plainSdp(40002)).then(
      () => null,
      (e: { status?: number }) => e,
    );
    expect(err?.status, 'plain offer from an sdes trunk').to.equal(488);
    await withToneCall('sdes', number, async ({ call }) => {
      expect(call.remoteSdp).to.match(/RTP\/SAVP/);
      expect(await call.bye()).to.equal(200);
    });
  });

  it('a call rtpengine no longer knows (deleted on its side, as its media timeout does) ends with media_relay_gone', async function () {
    this.timeout(20_000);
    const { number } = await echoNumber();
    const { party, far, call } = await callWithTone('sdes', number);
    const ng = new Client({ localAddress: '127.0.0.1', localPort: 0, timeout: 2000 });
    try {
      const live = await relayedCall();
      const ended = new Promise<HangupEvent>((r) => live!.once('hangup', r));
      const r = await ng.delete({ host: '127.0.0.1', port: rtpA.ngPort }, { 'call-id': live!.relay!.ngCallId });
      expect(r.result).to.equal('ok');
      // the client's sweep (every 5 s) finds it gone
      const ev = await Promise.race([ended, sleep(8000).then(() => null)]);
      expect(ev?.reason).to.match(/^media_relay_gone: rtpengine_lost_call/);
      await Promise.race([call.byeReceived, sleep(3000).then(() => Promise.reject(new Error('no BYE to the caller')))]);
    } finally {
      ng.close();
      party.close();
      await far.close();
    }
  });

  // last: rtpengine is killed
  it('rtpengine killed (SIGKILL) mid-call: the call ends with a reason within 2 s, the caller gets a BYE; /readyz says so', async () => {
    const { number } = await echoNumber();
    const { party, far, call } = await callWithTone('sdes', number);
    const api = await buildTestApp({ env: { REDIS_KEY_PREFIX: p.config.redisKeyPrefix } });
    try {
      expect((await request(api.app).get('/readyz')).body).to.include({ status: 'ok', rtpengine: 'ok' });
      const live = await relayedCall();
      const ended = new Promise<HangupEvent>((r) => live!.once('hangup', r));
      const killedAt = Date.now();
      await rtpA.kill();
      const ev = await ended;
      expect(Date.now() - killedAt, 'ended within 2 s').to.be.at.most(2000);
      expect(ev.reason).to.match(/^media_relay_gone: rtpengine_unreachable/);
      await Promise.race([call.byeReceived, sleep(3000).then(() => Promise.reject(new Error('no BYE to the caller')))]);
      const row = await (await testDb())('calls').where({ id: live!.id }).first();
      expect(row!.status).to.equal('hangup');
      expect(row!.hangup_by).to.equal('local');
      const ready = await until(
        async () => {
          const r = await request(api.app).get('/readyz');
          return r.body.rtpengine === 'unreachable' ? r : null;
        },
        3000,
        '/readyz reporting rtpengine',
      );
      expect(ready.status).to.equal(200);
      expect(ready.body.status).to.equal('degraded');
      expect(ready.body.missing.join()).to.include(rtpA.ng);
    } finally {
      party.close();
      await far.close();
      await api.close();
    }
  });
});

describe('media-app: rtpengine absent at start', function () {
  this.timeout(60_000);
  let p: Platform;
  let peer: SipPeer;
  let ng: string;

  before(async () => {
    ng = `127.0.0.1:${await freePort()}`; // nothing listens there
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RTPENGINE_NG: ng });
    peer = await SipPeer.open();
  });
  after(async () => {
    peer?.close();
    await p?.close();
  });

  it('a plain SIP call still works, an SRTP offer gets 488, /readyz says what is missing', async () => {
    const { number } = await echoNumber();
    const party = await RtpParty.open(440);
    const api = await buildTestApp({ env: { REDIS_KEY_PREFIX: p.config.redisKeyPrefix } });
    try {
      const plain = await peer.invite(`${number}@127.0.0.1`, p.sipPort, plainSdp(party.port));
      expect(plain.remoteSdp).to.match(/RTP\/AVP/);
      expect(await plain.bye()).to.equal(200);
      const srtp = plainSdp(party.port).replace('RTP/AVP', 'RTP/SAVP').replace('a=sendrecv', 'a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz\r\na=sendrecv');
      const err = await peer.invite(`${number}@127.0.0.1`, p.sipPort, srtp).then(
        () => null,
        (e: { status?: number }) => e,
      );
      expect(err?.status).to.equal(488);
      const ready = await request(api.app).get('/readyz');
      expect(ready.status).to.equal(200);
      expect(ready.body).to.include({ status: 'degraded', rtpengine: 'unreachable' });
      expect(ready.body.missing).to.deep.equal([`rtpengine at ${ng} (node ${p.app.nodeId})`]);
    } finally {
      party.close();
      await api.close();
    }
  });
});
