// Dead peers end on every shape of a `connect` bridge (issue 52): a party of the bridge dies (kill -9 of
// its sipp: no BYE, its RTP stops) and, once MEDIA_INACTIVITY_TIMEOUT_MS has passed, the BYE the
// platform sends to the side that stays carries `Reason: SIP;cause=408;text="Media timeout"`, as an
// extension call's does (dead-phone.test.ts). The shapes: a SIP caller (a trunk) whose flow connects it
// to a SIP endpoint, the same to a telephone number (the customer's route to a carrier on loopback), and
// a REST call (POST /calls) whose flow connects its party to a SIP endpoint; in each, the caller's side
// dies (its legs chained to it get the Reason) and the callee's side dies (the bridge returns the caller
// to its flow, which ends: its BYE carries the Reason). The dead side's row is media_timeout / remote,
// the other side's hangup_by local.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { parseActions } from '../../core/flow';
import type { CallRow } from '../../core/repos/calls';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { freePort, sippMediaPort, udpBound } from '../../testkit/ports';
import { killAllSipp, sipp, uacWaitsForBye, until, type SippResult } from '../../testkit/media-app/harness';
import { callUp, callWithStatus, hangupOf, legOf } from '../../testkit/long-calls/calls';
import { carrierOnLoopback } from '../../testkit/long-calls/carrier';
import { playPcap, receivedRequests, talking, talkingCallee, talkPcap } from '../../testkit/long-calls/dead-parties';
import { startStack, type Stack } from '../xfer/support';

const TIMEOUT_MS = 1500;
/** The receive watch's period (250 ms) and a loaded machine's slack. */
const LATE_MS = 3500;
const MEDIA_TIMEOUT_REASON = /^Reason:\s*SIP;cause=408;text="Media timeout"\s*$/im;

type Party = { done: Promise<SippResult>; kill(): void };
/** A connect bridge up: the caller's side (the master call) and the callee's (its connect leg), both talking. */
type Up = { master: { party: Party; id: string }; leg: { party: Party; id: string } };

describe('dead peers on a connect: the side that stays gets the BYE with the Reason', function () {
  this.timeout(60_000);
  let s: Stack;
  let cid: string;
  let carrierPort: number;
  let callerId: string;
  let n = 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dead-connect-'));
  const pcap = talkPcap(dir, 'talk.pcap', 20_000);

  before(async () => {
    s = await startStack({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', MEDIA_INACTIVITY_TIMEOUT_MS: String(TIMEOUT_MS) });
    cid = s.f.customer.id;
    const db = s.t.ctx.db;
    // callers from loopback come in as the customer's trunk; numbers go out to the carrier on loopback
    await trunksRepo(db).create(cid, `dc${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    carrierPort = await freePort();
    ({ callerId } = await carrierOnLoopback(db, cid, carrierPort));
  });
  after(async () => {
    killAllSipp();
    await s?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A called party talking on `port` until the platform's BYE, once its socket is bound. */
  async function callee(port: number): Promise<Party> {
    const party = sipp(talkingCallee(pcap), ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 40_000 });
    await udpBound(port);
    return party;
  }

  /** A number whose flow connects the caller to `destination`. */
  async function numberConnecting(destination: object, source?: object): Promise<string> {
    const db = s.t.ctx.db;
    const actions = [{ type: 'connect', option: { destinations: [destination], ...(source ? { source } : {}) } }];
    const flow = await flowsRepo(db).create({ customer_id: cid, actions: parseActions(actions) } as never);
    const num = `+8993100${String(++n).padStart(5, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number: num, type: 'virtual', call_flow_id: flow.id });
    return num;
  }

  /** A trunk caller to `num` that talks until the platform's BYE; its call once the flow's connect leg is up. */
  async function sipCaller(num: string, callee: Party): Promise<Up> {
    const mp = await sippMediaPort();
    const scenario = uacWaitsForBye(`${num}@127.0.0.1:${s.p.sipPort}`, '+15551230000', mp, { steps: playPcap(pcap), byeTimeoutMs: 20_000 });
    const party = sipp(scenario, [`127.0.0.1:${s.p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mi', '127.0.0.1', '-mp', String(mp)], { killAfterMs: 40_000 });
    const master = await until(
      async () => ((await s.t.ctx.db('calls').where({ customer_id: cid, direction: 'incoming' }).whereRaw(`destination->>'target' = ?`, [num]).first()) as CallRow | undefined) ?? null,
      20_000,
      'the caller’s call',
    );
    return bridged(master.id, party, callee);
  }

  /** Both sides up: the master and its connect leg progressing. */
  async function bridged(masterId: string, masterParty: Party, legParty: Party): Promise<Up> {
    const db = s.t.ctx.db;
    await callUp(db, masterId, 'the caller’s side up');
    const leg = await legOf(db, masterId, 'progressing', 'the callee’s side up');
    return { master: { party: masterParty, id: masterId }, leg: { party: legParty, id: leg.id } };
  }

  const shapes: { name: string; up(): Promise<Up> }[] = [
    {
      name: 'a SIP caller’s flow connects it to a SIP endpoint',
      async up() {
        const port = await freePort();
        const c = await callee(port);
        return sipCaller(await numberConnecting({ type: 'sip', target: `b@127.0.0.1:${port}` }), c);
      },
    },
    {
      name: 'a SIP caller’s flow connects it to a number (the route to a carrier)',
      async up() {
        const c = await callee(carrierPort);
        return sipCaller(await numberConnecting({ type: 'tel', target: '+15557650000' }, { type: 'tel', target: callerId }), c);
      },
    },
    {
      name: 'a REST call (POST /calls) whose flow connects its party to a SIP endpoint',
      async up() {
        const [portX, portC] = [await freePort(), await freePort()];
        const [x, c] = [await callee(portX), await callee(portC)];
        const res = await s.api.post('/calls', {
          source: { type: 'tel', target: '+899100000002' },
          destinations: [{ type: 'sip', target: `x@127.0.0.1:${portX}` }],
          actions: [{ type: 'connect', option: { destinations: [{ type: 'sip', target: `c@127.0.0.1:${portC}` }] } }],
        });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        return bridged(res.body.calls[0].id as string, x, c);
      },
    },
  ];

  for (const shape of shapes) {
    for (const dies of ['caller', 'callee'] as const) {
      it(`${shape.name}: the ${dies}’s side dies (kill -9), the other side’s BYE says "Media timeout"`, async () => {
        const up = await shape.up();
        // both talk: half a second of each side's RTP has reached the platform before one dies
        await talking(s.p, up.master.id, 'the caller');
        await talking(s.p, up.leg.id, 'the callee');
        const [dead, stays] = dies === 'caller' ? [up.master, up.leg] : [up.leg, up.master];
        const killedAt = Date.now();
        dead.party.kill();

        const r = await stays.party.done;
        const closedAfter = Date.now() - killedAt;
        expect(r.code, r.errors + r.messages.slice(-3000)).to.equal(0);
        expect(closedAfter, 'ended by the inactivity timeout: not before it').to.be.at.least(TIMEOUT_MS - 100);
        expect(closedAfter, 'ended by the inactivity timeout: soon after it').to.be.at.most(TIMEOUT_MS + LATE_MS);
        const [bye] = receivedRequests(r.messages, 'BYE');
        expect(bye, `the BYE to the ${dies === 'caller' ? 'callee' : 'caller'}:\n${r.messages.slice(-3000)}`).to.match(MEDIA_TIMEOUT_REASON);

        const db = s.t.ctx.db;
        expect(hangupOf(await callWithStatus(db, dead.id, 'hangup', 'the dead side ended')), 'the dead side').to.deep.equal({ hangup_by: 'remote', hangup_reason: 'media_timeout' });
        expect((await callWithStatus(db, stays.id, 'hangup', 'the side that stayed ended')).hangup_by, 'the side that stayed: hung up by the platform').to.equal('local');
        await until(() => (s.p.app.calls.get(dead.id) === undefined && s.p.app.calls.get(stays.id) === undefined) || null, 5000, 'both sessions gone');
      });
    }
  }
});
