// Hold, music on hold, silence and talk on a live call, end to end: the API (control-api) checks the
// request and sends the command to the node owning the call (BullMQ); media-app re-INVITEs the sipp
// party (its SDP direction checked by sipp and read back from its message log) and the audio the
// party receives is measured on a real RTP socket (packets and their level).
import { expect } from 'chai';
import request from 'supertest';
import { freePort, udpBound } from '../../testkit/ports';
import { grows, silentFor } from '../../testkit/count-waits';
import { killAllSipp, RtpSink, sipp, sleep, until } from '../../testkit/media-app/harness';
import { startStack, type Stack } from '../xfer/support';
import { closeCommandBus } from '../../control-api/calls/bus';
import { heldParty as party, offeredDirections } from './held-party';

const SPEECH = 'The quick brown fox jumps over the lazy dog, again and again. '.repeat(12);

describe('call controls: hold, music on hold, silence, talk', function () {
  this.timeout(120_000);
  let s: Stack;
  const sinks: RtpSink[] = [];

  before(async () => {
    s = await startStack({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
  });
  after(async () => {
    killAllSipp();
    for (const k of sinks) k.close();
    if (s) await closeCommandBus(s.t.ctx);
    await s?.close();
  });

  const auth = () => `Bearer ${s.f.token}`;
  const send = (method: 'post' | 'delete', path: string, body?: object) => {
    const r = request(s.t.app)[method](`/v1.0${path}`).set('Authorization', auth());
    return body ? r.send(body) : r;
  };

  /** A live call to a sipp party whose RTP lands on a fresh sink; the flow runs `actions`. */
  async function liveCall(actions: object[], reinvites: ('inactive' | 'sendonly' | 'sendrecv')[]) {
    const sink = await RtpSink.open();
    sinks.push(sink);
    const px = await freePort();
    const x = sipp(party(sink.port, reinvites), ['-i', '127.0.0.1', '-p', String(px), '-m', '1', '-timeout', '90s'], { killAfterMs: 100_000 });
    await udpBound(px); // the party has bound its port: the INVITE waits in its socket
    const res = await send('post', '/calls', { source: { type: 'tel', target: '+15550001111' }, destinations: [{ type: 'sip', target: `held@127.0.0.1:${px}` }], actions });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const id = res.body.calls[0].id as string;
    await until(async () => (await s.t.ctx.db('calls').where({ id }).first())?.status === 'progressing', 15_000, 'answered');
    return { id, sink, x };
  }

  /** Packets and voiced packets the sink gets over `ms`. */
  async function window(sink: RtpSink, ms: number) {
    const [p0, v0] = [sink.packets, sink.voiced];
    await sleep(ms);
    return { packets: sink.packets - p0, voiced: sink.voiced - v0 };
  }

  /** From the first voiced packet on (what the change brought), more than `n` voiced within `ms`. */
  async function heardAgain(sink: RtpSink, n: number, ms: number, what: string) {
    await grows(() => sink.voiced, 1, 10_000, `${what} (its first voiced packet)`);
    await grows(() => sink.voiced, n + 1, ms, what);
  }

  /** What was in flight arrives, then no voiced packet for `ms` while more than `n` packets still come. */
  async function quietWhileFlowing(sink: RtpSink, n: number, ms: number, quiet: string, flowing: string) {
    await Promise.all([silentFor(() => sink.voiced, ms, quiet), grows(() => sink.packets, n + 1, ms, flowing)]);
  }

  const metadata = async (id: string) => ((await s.t.ctx.db('calls').where({ id }).first()) as { metadata: Record<string, unknown> }).metadata;

  it('a silent hold (music "") re-INVITEs with a=inactive and media stops; music on hold while held re-offers a=sendonly and the music arrives; unhold re-offers a=sendrecv', async () => {
    const { id, sink, x } = await liveCall([{ type: 'sleep', option: { duration: 60_000 } }], ['inactive', 'sendonly', 'sendrecv']);
    const before = await window(sink, 800);
    expect(before.packets, 'media flows before the hold').to.be.greaterThan(25);
    expect(before.voiced, 'nothing plays yet').to.equal(0);

    expect((await send('post', `/calls/${id}/hold`, { music: '' })).status).to.equal(200);
    await until(async () => (await metadata(id)).hold === true, 10_000, 'held');
    await silentFor(() => sink.packets, 1000, 'no media to a party held with a=inactive');

    expect((await send('post', `/calls/${id}/moh`)).status).to.equal(200);
    await until(async () => (await metadata(id)).moh === true, 10_000, 'music on');
    await heardAgain(sink, 40, 1500, 'the music reaches the held party');

    expect((await send('delete', `/calls/${id}/hold`)).status).to.equal(200);
    await until(async () => (await metadata(id)).hold === false, 10_000, 'unheld');
    expect((await send('delete', `/calls/${id}/moh`)).status).to.equal(200);
    await until(async () => (await metadata(id)).moh === false, 10_000, 'music off');
    await quietWhileFlowing(sink, 30, 1000, 'the music stopped', 'media flows again');

    const events = (await s.t.ctx.db('calls').where({ id }).first()) as { metadata: Record<string, unknown> };
    expect(events.metadata).to.include({ hold: false, moh: false });
    expect((await send('post', `/calls/${id}/hangup`)).status).to.equal(200);
    const r = await x.done;
    expect(r.code, r.errors + r.messages.slice(-3000)).to.equal(0);
    expect(offeredDirections(r)).to.deep.equal(['sendrecv', 'inactive', 'sendonly', 'sendrecv']);
  });

  /** A call whose flow speaks, heard by the party, then silenced through the API. */
  async function silencedSpeech() {
    const c = await liveCall(
      [
        { type: 'talk', option: { text: SPEECH, language: 'en-US' } },
        { type: 'sleep', option: { duration: 60_000 } },
      ],
      [],
    );
    await until(() => c.sink.voiced > 20, 10_000, 'speech arrives');
    expect((await send('post', `/calls/${c.id}/silence`)).status).to.equal(200);
    await until(async () => (await metadata(c.id)).silence === true, 10_000, 'silenced');
    return c;
  }

  it('silence: the party hears nothing while packets still flow; talk speaks into the call', async () => {
    const { id, sink, x } = await silencedSpeech();
    await quietWhileFlowing(sink, 40, 1200, 'but carries silence', 'RTP keeps flowing');
    expect((await send('delete', `/calls/${id}/silence`)).status).to.equal(200);
    await until(async () => (await metadata(id)).silence === false, 10_000, 'silence ended');
    await heardAgain(sink, 20, 1500, 'the speech is heard again');

    // stop the flow's speech (it plays on for a while): the talk is then the only thing that can speak
    expect((await send('post', `/calls/${id}/moh`)).status).to.equal(200);
    expect((await send('delete', `/calls/${id}/moh`)).status).to.equal(200);
    await until(async () => (await metadata(id)).moh === false, 10_000, 'playback stopped');
    await silentFor(() => sink.voiced, 800, 'quiet before the talk');
    expect((await send('post', `/calls/${id}/talk`, { text: 'Your order has shipped.', language: 'en-US' })).status).to.equal(200);
    await until(() => sink.voiced > 10, 10_000, 'the talk is heard');
    await send('post', `/calls/${id}/hangup`);
    expect((await x.done).code).to.equal(0);
  });

  it('a REST unmute of a silenced call lets no audio out; ending the silence does, and a mute still holds after it', async () => {
    const { id, sink, x } = await silencedSpeech();
    const muteDir = async () => ((await s.t.ctx.db('calls').where({ id }).first()) as { mute_direction: string }).mute_direction;
    // mute, then unmute, through the API: the user's mute ends, the silence does not
    expect((await send('post', `/calls/${id}/mute`, { direction: 'both' })).status).to.equal(200);
    await until(async () => (await muteDir()) === 'both', 10_000, 'muted');
    expect((await send('delete', `/calls/${id}/mute`)).status).to.equal(200);
    await until(async () => (await muteDir()) === '', 10_000, 'unmuted');
    await quietWhileFlowing(sink, 40, 1500, 'the unmute does not undo the silence', 'RTP keeps flowing');

    // the other way round: a mute set while silenced outlives the end of the silence
    expect((await send('post', `/calls/${id}/mute`, { direction: 'out' })).status).to.equal(200);
    await until(async () => (await muteDir()) === 'out', 10_000, 'muted out');
    expect((await send('delete', `/calls/${id}/silence`)).status).to.equal(200);
    await until(async () => (await metadata(id)).silence === false, 10_000, 'silence ended');
    await silentFor(() => sink.voiced, 1200, 'the end of the silence does not undo the mute');

    expect((await send('delete', `/calls/${id}/mute`, { direction: 'out' })).status).to.equal(200);
    await until(async () => (await muteDir()) === '', 10_000, 'unmuted again');
    await heardAgain(sink, 20, 1500, 'with neither, the speech is heard again');
    await send('post', `/calls/${id}/hangup`);
    expect((await x.done).code).to.equal(0);
  });

  it('bad input and calls not live: clear errors in the envelope', async () => {
    const bad = await send('post', `/calls/not-a-uuid/hold`);
    expect(bad.status).to.equal(400);
    const none = await send('post', `/calls/6f1f5c1e-0000-4000-8000-000000000001/moh`);
    expect(none.status).to.equal(404);
    expect(none.body.error.reason).to.equal('CALL_NOT_FOUND');
    const id = (await s.t.ctx.db('calls').where({ customer_id: s.f.customer.id, status: 'hangup' }).first('id'))?.id as string;
    const ended = await send('post', `/calls/${id}/silence`);
    expect(ended.status, JSON.stringify(ended.body)).to.be.within(400, 499);
    for (const body of [{}, { text: '' }, { text: 'hi', language: 'not a tag!' }, { text: 'hi', provider: 'gcp' }, { text: 'hi', voice_id: 'a b;c' }]) {
      const r = await send('post', `/calls/${id}/talk`, body);
      expect(r.status, JSON.stringify(body)).to.equal(400);
    }
  });
});
