// Issue 36: conference mute and hold callbacks for a participant whose call is on another node than
// its room. Two media-app nodes (child processes, each with its sip-server, as test/scale/*-xnode
// do), a room hosted on one, a sipp caller on the other joining it through a bridge leg; the official
// twilio client mutes, unmutes, holds and unholds it through REST Participants (the call's node
// applies them; the sipp caller answers the hold re-INVITEs). The room's node sends
// participant-mute/-unmute/-hold/-unhold, signed (twilio.validateRequest), in order with join and leave.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { trunksRepo } from '../../../core/repos/trunks';
import { twilioAuthToken } from '../../../core/twilio/auth-token';
import { accountSid, callSid, toSid } from '../../../core/twilio/sids';
import { createFixture, TEST_JWT_SECRET, type Fixture } from '../../../testkit/api';
import { truncateAll } from '../../../testkit/db';
import { killAllSipp, sipp, sleep, uacWaitsForBye, until } from '../../../testkit/media-app/harness';
import { answerReinvite } from '../../../testkit/media-app/sipp-steps';
import { Cluster } from '../../../testkit/scale/cluster';
import { numberWithFlow } from '../../../testkit/scale/fixtures';
import { RtpPeer } from '../../../testkit/streams/support';
import { serveApp, twilioClient, type ServedApp } from '../../../testkit/twilio';
import { TwimlServer } from '../../../testkit/twiml/server';
import { expectParticipantLifecycle } from '../../../testkit/twiml/participant-events';

describe('TwiML conference mute/hold callbacks for a participant on another node than its room', function () {
  this.timeout(240_000);
  let c: Cluster;
  let f: Fixture;
  let app: TwimlServer;
  let api: ServedApp;
  let peer: RtpPeer;

  before(async () => {
    await truncateAll();
    // the callbacks go to the test's server on loopback: opted in; the nodes sign with the secret the
    // control-api copies have (as one deployment's processes share it), so the AuthToken is one
    c = await Cluster.start({ nodes: 2, env: { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', JWT_SECRET: TEST_JWT_SECRET } });
    f = await createFixture(c.apis[0]!.ctx);
    await trunksRepo(c.db).create(f.customer.id, `xe${randomBytes(4).toString('hex')}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    app = await TwimlServer.start(twilioAuthToken(c.apis[0]!.ctx.config.jwtSecret, f.customer.id, 0));
    api = await serveApp(c.apis[0]!.app);
    peer = await RtpPeer.open();
  });
  after(async () => {
    killAllSipp();
    peer?.close();
    await api?.close();
    await app?.close();
    await c?.close();
  });

  it('participant-mute, -unmute, -hold, -unhold reach the callback from the room’s node, in order, signed', async () => {
    const res = await request(c.apis[0]!.app).post('/v1.0/conferences').query({ accesskey: f.accesskey }).send({ type: 'conference', name: 'xnode events' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const confId = String(res.body.id);
    const hostId = await until(() => c.redis.get(`${c.prefix}conference-node:${confId}`), 10_000, 'conference hosted');
    const other = c.nodes.find((n) => n.id !== hostId)!;
    app.on('/xe', '<Response/>');
    const { number } = await numberWithFlow(
      c.db,
      '',
      [
        { type: 'answer' },
        { type: 'conference_join', option: { conference_id: confId, status_callback: { url: app.url('/xe'), method: 'POST', events: ['join', 'leave', 'mute', 'hold'] } } },
        { type: 'hangup' },
      ],
      f.customer.id,
    );
    const ruri = `${number}@127.0.0.1:${other.sipPort}`;
    const steps = `${answerReinvite(peer.port, 'inactive', 2)}\n${answerReinvite(peer.port, 'sendrecv', 3)}`;
    const run = sipp(uacWaitsForBye(ruri, '+15550001234', peer.port, { steps, byeTimeoutMs: 120_000 }), [`127.0.0.1:${other.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '150s'], {
      killAfterMs: 160_000,
    });
    const cc = await until(async () => (await c.db('conferencecalls').where({ conference_id: confId, status: 'joined' }).first()) as { reference_id: string } | undefined, 30_000, 'joined');
    const call = (await c.db('calls').where({ id: cc.reference_id }).first()) as { node_id: string };
    expect(call.node_id, 'the call lives on the other node').to.equal(other.id);

    const client = twilioClient(api.baseUrl, accountSid(f.customer.id), twilioAuthToken(c.apis[0]!.ctx.config.jwtSecret, f.customer.id, 0));
    const p = client.conferences(toSid('CF', confId)).participants(callSid(cc.reference_id));
    expect((await p.update({ muted: true })).muted).to.equal(true);
    expect((await p.update({ muted: false })).muted).to.equal(false);
    expect((await p.update({ hold: true })).hold).to.equal(true);
    expect((await p.update({ hold: false })).hold).to.equal(false);
    await sleep(500);
    await p.remove();
    // (this room's: a retry's receiver still holds the first attempt's callbacks)
    const events = () => app.requests.filter((r) => r.path === '/xe' && r.params.ConferenceSid === toSid('CF', confId));
    const got = await until(() => (events().length >= 6 ? events() : null), 20_000, 'six callbacks').catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(events().map((r) => r.params.StatusCallbackEvent))}`);
    });
    await sleep(1000);
    expect(events().length, 'no more than six').to.equal(6);
    expectParticipantLifecycle(got, { CallSid: callSid(cc.reference_id), ConferenceSid: toSid('CF', confId) });
    const s = await run.done;
    expect(s.code, s.errors + s.messages).to.equal(0);
  });
});
