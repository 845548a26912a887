// Hold on both media backends (issue 55): 'embedded' (media-engine in media-app) and 'fsmrf' (the
// leg's channel on our switch, esl/, through drachtio-fsmrf). POST /calls/{id}/hold re-INVITEs the sipp
// party with a=sendonly, its o= version past the last one it saw, and the party hears the music on hold
// (the node's); DELETE re-INVITEs it with a=sendrecv: the music stops, the platform's audio reaches the
// party again and the party's tone reaches the platform's side of the leg (its endpoint's received
// packets); in a bridged call the two parties hear each other's tone again. On fsmrf the re-offer is the switch's SDP and the party's answer goes to the switch
// (media-server/README.md "Hold on fsmrf"). Real loopback SIP and RTP: control-api, media-app, sipp, a
// tone-sending RTP party, our switch.
import { expect } from 'chai';
import request from 'supertest';
import { freePort, udpBound } from '../../testkit/ports';
import { killAllSipp, sipp, sleep, until, type SippResult } from '../../testkit/media-app/harness';
import { grows, silentFor, type Count } from '../../testkit/count-waits';
import { startStack, TonePeer, type Stack } from '../xfer/support';
import { closeCommandBus } from '../../control-api/calls/bus';
import { CallSession } from '../../media-app/call/session';
import { heldParty, offeredDirections, offeredVersions, type HeldDirection } from './held-party';

/** MEDIA_INACTIVITY_TIMEOUT_MS: a party that sends nothing for it is ended, unless held */
const TIMEOUT_MS = 1500;

for (const backend of ['embedded', 'fsmrf'] as const) {
  describe(`hold on the ${backend} media backend`, function () {
    this.timeout(120_000);
    let s: Stack;
    const peers: TonePeer[] = [];

    before(async () => {
      s = await startStack({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', MEDIA_INACTIVITY_TIMEOUT_MS: String(TIMEOUT_MS) }, { mediaServer: backend });
    });
    after(async () => {
      killAllSipp();
      for (const t of peers) t.close();
      if (s) await closeCommandBus(s.t.ctx);
      await s?.close();
    });

    const send = (method: 'post' | 'delete', path: string, body?: object) => {
      const r = request(s.t.app)[method](`/v1.0${path}`).set('Authorization', `Bearer ${s.f.token}`);
      return body ? r.send(body) : r;
    };
    const metadata = async (id: string) => ((await s.t.ctx.db('calls').where({ id }).first()) as { metadata: Record<string, unknown> }).metadata;

    /** The packets the leg's endpoint received (the party's tone taken by the platform). */
    const heard =
      (id: string): Count =>
      async () => {
        const call = s.p.app.calls.get(id);
        if (!(call instanceof CallSession) || !call.endpoint) throw new Error(`call ${id} has no endpoint on the node`);
        return (await call.endpoint.getStats()).packetsReceived;
      };

    /** What the party got (packets, voiced packets) and what the leg's endpoint received over `ms`. */
    async function window(peer: TonePeer, id: string, ms: number) {
      const rx0 = await heard(id)();
      const [p0, v0] = [peer.received, peer.voiced];
      await sleep(ms);
      return { packets: peer.received - p0, voiced: peer.voiced - v0, heard: (await heard(id)()) - rx0 };
    }

    /**
     * After an unhold: the first packet of the new direction each way (the platform's audio to the party,
     * the party's tone taken by the leg), then from there more than `n` each way within `ms`, the party's
     * within 2 `ms`: it is sent by this test process, which the suite's parallel shards slow (30 of 31
     * within 1 s of the first, once in four runs beside two CPU burners).
     */
    async function flowsBothWays(peer: TonePeer, id: string, n = 30, ms = 1000) {
      const toParty = () => peer.received;
      await Promise.all([grows(toParty, 1, 10_000, "the platform's first packet to the party once resumed"), grows(heard(id), 1, 10_000, "the party's first packet taken by the leg once resumed")]);
      await Promise.all([grows(toParty, n + 1, ms, "the platform's audio reaches the party again"), grows(heard(id), n + 1, 2 * ms, "the party's tone reaches the leg again")]);
    }

    /** A live call to a sipp party (its RTP a TonePeer) that takes one re-INVITE per direction in `reinvites`. */
    async function liveCall(reinvites: HeldDirection[]) {
      const peer = await TonePeer.open();
      peers.push(peer);
      const px = await freePort();
      const x = sipp(heldParty(peer.port, reinvites), ['-i', '127.0.0.1', '-p', String(px), '-m', '1', '-timeout', '90s'], { killAfterMs: 100_000 });
      await udpBound(px); // the party has bound its port: the INVITE waits in its socket
      const res = await send('post', '/calls', {
        source: { type: 'tel', target: '+15550001111' },
        destinations: [{ type: 'sip', target: `held@127.0.0.1:${px}` }],
        actions: [{ type: 'sleep', option: { duration: 60_000 } }],
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const id = res.body.calls[0].id as string;
      await until(async () => (await s.t.ctx.db('calls').where({ id }).first())?.status === 'progressing', 15_000, 'answered');
      await until(() => peer.received > 10, 10_000, 'the platform sends to the party');
      return { id, peer, x };
    }

    /** Hangs the call up; the party's INVITEs' directions and o= versions. */
    async function hangUp(id: string, x: { done: Promise<SippResult> }) {
      expect((await send('post', `/calls/${id}/hangup`)).status).to.equal(200);
      const r = await x.done;
      expect(r.code, r.errors + r.messages.slice(-3000)).to.equal(0);
      return { directions: offeredDirections(r), versions: offeredVersions(r) };
    }

    it('hold re-INVITEs with a=sendonly and the party hears the music; unhold re-INVITEs with a=sendrecv and the audio flows both ways', async () => {
      const { id, peer, x } = await liveCall(['sendonly', 'sendrecv']);
      const before = await window(peer, id, 800);
      expect(before.voiced, 'nothing plays yet').to.equal(0);
      expect(before.heard, "the party's tone reaches the leg before the hold").to.be.greaterThan(25);

      const held = await send('post', `/calls/${id}/hold`, {});
      expect(held.status, JSON.stringify(held.body)).to.equal(200);
      await until(async () => (await metadata(id)).hold === true, 10_000, 'held');
      await until(() => peer.voiced > 20, 10_000, 'the music on hold reaches the held party');

      // the music (a 6 s phrase) stops before the mutes are written: on fsmrf a mute queued behind the
      // playing file would hold the unhold until the phrase ends (media-state.ts)
      expect((await send('delete', `/calls/${id}/hold`)).status).to.equal(200);
      // held ~0.4 s into the 6 s phrase: an unhold queued behind it would take 5.6 s; 4.5 s leaves room for load
      await until(async () => (await metadata(id)).hold === false, 4500, 'unheld before the phrase ends');
      // the music's last frames in flight arrive, then none for 1 s while the audio flows both ways again;
      // the music stops before the unhold is recorded, so only what was in flight may arrive after it:
      // settled within 500 ms (the default 5 s would pass music that plays on for seconds after the unhold)
      await Promise.all([silentFor(() => peer.voiced, 1000, 'the music stopped', { settleMs: 500 }), flowsBothWays(peer, id)]);

      const got = await hangUp(id, x);
      expect(got.directions).to.deep.equal(['sendrecv', 'sendonly', 'sendrecv']);
      // each re-offer is a changed SDP: its o= version goes up (RFC 3264 §8)
      const [v0, v1, v2] = got.versions as [number, number, number];
      expect(v1, 'the hold offer').to.be.greaterThan(v0);
      expect(v2, 'the unhold offer').to.be.greaterThan(v1);
    });

    it('a silent hold (music "") re-INVITEs with a=inactive and nothing reaches the party; unhold brings the audio back both ways', async () => {
      const { id, peer, x } = await liveCall(['inactive', 'sendrecv']);
      expect((await send('post', `/calls/${id}/hold`, { music: '' })).status).to.equal(200);
      await until(async () => (await metadata(id)).hold === true, 10_000, 'held');
      // what was in flight at the re-INVITE's answer arrives, then nothing either way for 1 s
      await Promise.all([silentFor(() => peer.received, 1000, 'no media to a party held with a=inactive'), silentFor(heard(id), 1000, "the party's tone is not taken while inactive")]);

      expect((await send('delete', `/calls/${id}/hold`)).status).to.equal(200);
      await until(async () => (await metadata(id)).hold === false, 10_000, 'unheld');
      await flowsBothWays(peer, id);

      const got = await hangUp(id, x);
      expect(got.directions).to.deep.equal(['sendrecv', 'inactive', 'sendrecv']);
    });

    /** On fsmrf, the switch channel's media_timeout (what FreeSWITCH reads at a re-INVITE); null on the engine. */
    function switchMediaTimeout(id: string): string | null {
      const call = s.p.app.calls.get(id);
      if (!s.p.switch || !(call instanceof CallSession) || !call.endpoint) return null;
      const ch = s.p.switch.sw.esl.channels.get(call.endpoint.uuid) as unknown as { channel: { variables: Map<string, string> } } | undefined;
      return ch?.channel.variables.get('media_timeout') ?? 'no channel';
    }

    it('a held party that sends nothing stays up past the media timeout; once resumed, its silence ends the call', async () => {
      const { id, peer, x } = await liveCall(['sendonly', 'sendrecv']);
      const row = async () => (await s.t.ctx.db('calls').where({ id }).first()) as { status: string; hangup_reason: string | null };
      expect((await send('post', `/calls/${id}/hold`, {})).status).to.equal(200);
      await until(async () => (await metadata(id)).hold === true, 10_000, 'held');
      // a phone held with recvonly sends nothing: on a FreeSWITCH the unhold's media_timeout read would
      // arm the timeout again at once, so the backend sets it to 0 before the switch gets the answer
      peer.silent = true;
      if (backend === 'fsmrf') expect(switchMediaTimeout(id), "the switch channel's media_timeout while held").to.equal('0');
      await sleep(3 * TIMEOUT_MS);
      expect((await row()).status, 'held past 3x the media timeout').to.equal('progressing');

      expect((await send('delete', `/calls/${id}/hold`)).status).to.equal(200);
      await until(async () => (await metadata(id)).hold === false, 10_000, 'unheld');
      peer.silent = false;
      if (backend === 'fsmrf') expect(switchMediaTimeout(id), "the switch channel's media_timeout once resumed").to.equal(String(TIMEOUT_MS));
      await grows(heard(id), 1, 10_000, "the party's first packet taken by the leg once resumed");
      await grows(heard(id), 21, 1600, "the party's tone reaches the leg again"); // sent by this process: 2x (flowsBothWays)

      // resumed, the watch is armed again: a party that goes quiet now is ended after the timeout
      const quiet = performance.now();
      peer.silent = true;
      const ended = await until(async () => ((await row()).status === 'hangup' ? await row() : null), 4 * TIMEOUT_MS + 3000, 'ended by the media timeout');
      expect(performance.now() - quiet, 'not before the timeout').to.be.greaterThan(TIMEOUT_MS);
      expect(ended.hangup_reason).to.equal('media_timeout');
      const r = await x.done;
      expect(r.code, r.errors + r.messages.slice(-3000)).to.equal(0);
      expect(offeredDirections(r)).to.deep.equal(['sendrecv', 'sendonly', 'sendrecv']);
    });

    it('a bridged call: the held side gets a=sendonly and its audio stops reaching the other; unhold brings the tones back both ways', async () => {
      const [a, b] = [await TonePeer.open(), await TonePeer.open()];
      peers.push(a, b);
      const [pa, pb] = [await freePort(), await freePort()];
      const xa = sipp(heldParty(a.port, ['sendonly', 'sendrecv']), ['-i', '127.0.0.1', '-p', String(pa), '-m', '1', '-timeout', '90s'], { killAfterMs: 100_000 });
      const xb = sipp(heldParty(b.port, []), ['-i', '127.0.0.1', '-p', String(pb), '-m', '1', '-timeout', '90s'], { killAfterMs: 100_000 });
      await Promise.all([udpBound(pa), udpBound(pb)]); // both parties have bound their ports
      const res = await send('post', '/calls', {
        source: { type: 'tel', target: '+15550001111' },
        destinations: [{ type: 'sip', target: `held@127.0.0.1:${pa}` }],
        actions: [{ type: 'connect', option: { source: { type: 'tel', target: '+15550001111' }, destinations: [{ type: 'sip', target: `other@127.0.0.1:${pb}` }] } }],
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const id = res.body.calls[0].id as string;
      await until(() => a.voiced > 25 && b.voiced > 25, 20_000, 'each party hears the other before the hold');

      expect((await send('post', `/calls/${id}/hold`, {})).status).to.equal(200);
      await until(async () => (await metadata(id)).hold === true, 10_000, 'held');
      // the other side quiet meanwhile (for less than the media timeout): what the held party hears is the music alone
      // (b's last frames in flight are fewer than the 21 counted: the music is what a hears)
      b.silent = true;
      await Promise.all([
        grows(() => a.voiced, 21, 1000, 'the held party hears the music'),
        silentFor(() => b.voiced, 700, "the held party's tone does not reach the other", { allow: 4, settleMs: 500 }),
      ]);
      b.silent = false;

      expect((await send('delete', `/calls/${id}/hold`)).status).to.equal(200);
      await until(async () => (await metadata(id)).hold === false, 10_000, 'unheld');
      // the first of the resumed party's tone at the other is the new direction; from there both ways
      await grows(() => b.voiced, 1, 10_000, "the resumed party's first voiced packet at the other");
      // each tone sent by this process: 2x the window (flowsBothWays)
      await Promise.all([grows(() => a.voiced, 31, 2000, 'the resumed party hears the other'), grows(() => b.voiced, 31, 2000, 'the other hears the resumed party')]);

      expect((await send('post', `/calls/${id}/hangup`)).status).to.equal(200);
      const [ra, rb] = [await xa.done, await xb.done];
      expect(ra.code, ra.errors + ra.messages.slice(-3000)).to.equal(0);
      expect(rb.code, rb.errors + rb.messages.slice(-3000)).to.equal(0);
      expect(offeredDirections(ra)).to.deep.equal(['sendrecv', 'sendonly', 'sendrecv']);
    });
  });
}
