// Long calls of a conference whose participants' calls live on another node than the room (issue 52).
// Two media-app nodes; the room is hosted on one; on the other, a caller X dials a number whose flow
// dials C (the call action: a leg dialled by that node, with the dial timeout armed; C rings past half
// of it) and both join the room, each through a bridge leg to the host. CALL_DIAL_TIMEOUT_MS is 1.5 s,
// MEDIA_INACTIVITY_TIMEOUT_MS 3 s (the longest timer here; the nodes' heartbeat and the legs' watches
// of it run every second); X and C are held past three times the longest (rows progressing, both
// joined, each hears the other through the host's mix, no BYE), then each hangs up and the records say so.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { trunksRepo } from '../../core/repos/trunks';
import { createFixture, type Fixture } from '../../testkit/api';
import { RtpParty } from '../../testkit/conference/party';
import { truncateAll } from '../../testkit/db';
import { callWithStatus, hangupOf } from '../../testkit/long-calls/calls';
import { holdFor } from '../../testkit/long-calls/hold';
import { answerer } from '../../testkit/long-calls/parties';
import { DIAL_TIMEOUT_MS, holdPast } from '../../testkit/long-calls/timers';
import { conferenceOnOneNode } from '../../testkit/long-calls/xnode';
import { killAllSipp, sipp, until, type SippResult } from '../../testkit/media-app/harness';
import { freePort } from '../../testkit/ports';
import { Cluster } from '../../testkit/scale/cluster';
import { numberWithFlow } from '../../testkit/scale/fixtures';
import { uacHangsUpAfter } from '../conference/sipp';

const [TONE_X, TONE_C] = [700, 1900];
const MEDIA_INACTIVITY_MS = 3000;
const HOLD_MS = holdPast(Math.max(DIAL_TIMEOUT_MS, MEDIA_INACTIVITY_MS));
/** After the hold: time for the checks before the parties' BYEs. */
const CHECKS_MS = 4000;

describe('long calls: conference participants on another node than the room', function () {
  this.timeout(180_000);
  let c: Cluster;
  let f: Fixture;
  const open: { close(): void }[] = [];

  before(async () => {
    await truncateAll();
    c = await Cluster.start({ nodes: 2, env: { CALL_DIAL_TIMEOUT_MS: String(DIAL_TIMEOUT_MS), MEDIA_INACTIVITY_TIMEOUT_MS: String(MEDIA_INACTIVITY_MS) } });
    f = await createFixture(c.apis[0]!.ctx);
    await trunksRepo(c.db).create(f.customer.id, `lx${randomBytes(4).toString('hex')}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  });
  after(async () => {
    killAllSipp();
    for (const o of open) o.close();
    await c?.close();
  });

  const ok = (r: SippResult, who: string) => expect(r.code, `${who}: ${r.errors}${r.messages.slice(-2000)}`).to.equal(0);
  const party = async (freq: number) => {
    const p = await RtpParty.open(freq);
    open.push(p);
    return p;
  };

  it('X calls in, its flow dials C (ringing past half the dial timeout); both in the room through bridge legs, held past 3× the timers, each hangs up', async () => {
    const conf = await conferenceOnOneNode(c, f);
    const [x, cAudio] = [await party(TONE_X), await party(TONE_C)];
    const cPort = await freePort();
    const join = { type: 'conference_join', option: { conference_id: conf.id } };
    const { number } = await numberWithFlow(
      c.db,
      '',
      [{ type: 'answer' }, { type: 'call', option: { destinations: [{ type: 'sip', target: `c@127.0.0.1:${cPort}` }], actions: [join, { type: 'hangup' }] } }, join, { type: 'hangup' }],
      f.customer.id,
    );
    const cRun = sipp(
      answerer({ rtpPort: cAudio.port, ringMs: Math.round(DIAL_TIMEOUT_MS * 0.7), hangupAfterMs: HOLD_MS + CHECKS_MS }),
      ['-i', '127.0.0.1', '-p', String(cPort), '-m', '1', '-timeout', '90s'],
      {
        killAfterMs: 90_000,
      },
    );
    // X hangs up after C (C's ring, the joins, the hold, the checks)
    const xRun = sipp(
      uacHangsUpAfter(`${number}@127.0.0.1:${conf.other.sipPort}`, '+15550007001', x.port, HOLD_MS + CHECKS_MS + 6000),
      [`127.0.0.1:${conf.other.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-timeout', '90s'],
      {
        killAfterMs: 90_000,
      },
    );
    const joined = await until(
      async () => {
        const rows = (await c.db('conferencecalls').where({ conference_id: conf.id, status: 'joined' })) as { id: string; reference_id: string }[];
        return rows.length === 2 ? rows : null;
      },
      30_000,
      'X and C joined',
    );
    const callOf = (direction: 'incoming' | 'outgoing', what: string) =>
      until(async () => ((await c.db('calls').where({ customer_id: f.customer.id, direction }).first()) as { id: string; node_id: string } | undefined) ?? null, 5000, what);
    const [xCall, cCall] = [await callOf('incoming', 'X’s call'), await callOf('outgoing', 'C’s call')];
    expect(joined.map((r) => r.reference_id)).to.have.members([xCall.id, cCall.id]);
    expect([xCall.node_id, cCall.node_id], 'both calls on the node that does not host the room').to.deep.equal([conf.other.id, conf.other.id]);

    await holdFor(HOLD_MS, {
      db: c.db,
      calls: [xCall.id, cCall.id],
      parties: [
        { name: 'X', done: xRun.done },
        { name: 'C', done: cRun.done },
      ],
    });
    expect(await c.db('conferencecalls').where({ conference_id: conf.id, status: 'joined' }), 'both still in the room after the hold').to.have.length(2);
    const t0 = Date.now();
    // a second of audio at each party after the hold (50 frames), then what it carried
    await until(() => (x.framesBetween(t0) >= 50 && cAudio.framesBetween(t0) >= 50) || null, 10_000, 'a second of audio at X and C after the hold');
    expect(x.presence(TONE_C, t0), 'X hears C after the hold').to.be.greaterThan(0.5);
    expect(cAudio.presence(TONE_X, t0), 'C hears X after the hold').to.be.greaterThan(0.5);

    const [rc, rx] = [await cRun.done, await xRun.done];
    ok(rc, 'C');
    ok(rx, 'X');
    expect(hangupOf(await callWithStatus(c.db, cCall.id, 'hangup', 'C ended'))).to.deep.equal({ hangup_by: 'remote', hangup_reason: 'normal' });
    expect(hangupOf(await callWithStatus(c.db, xCall.id, 'hangup', 'X ended'))).to.deep.equal({ hangup_by: 'remote', hangup_reason: 'normal' });
    await until(async () => (await c.db('conferencecalls').where({ conference_id: conf.id }).whereNot({ status: 'leaved' })).length === 0, 10_000, 'both left the room');
  });
});
