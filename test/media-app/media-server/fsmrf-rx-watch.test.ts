// The receive watch on the fsmrf backend (the switch's `media_timeout`, esl/media-timeout.ts): a far end of
// real RTP on loopback (a UDP socket of the test sending 20 ms PCMU packets) talks, pauses and stops; the
// switch ends the channel with MEDIA_TIMEOUT after the timeout and not before, the leg reporting
// 'rxTimeout' then 'destroy'. As on FreeSWITCH, the switch reads the variable only when it activates the
// leg's RTP (the answer, a re-INVITE): the backend puts it on the leg's INVITE (X-Media-Timeout, set by the
// mrf dialplan before its answer), watchRx of that timeout resolves, any other (or 0) is refused and
// media-app logs and counts it as unarmed; a uuid_setvar or set mid-call arms nothing until a re-INVITE.
import { expect } from 'chai';
import { Writable } from 'node:stream';
import pino from 'pino';
import { platformMetrics } from '../../../core/metrics';
import { watchParty } from '../../../media-app/call/dead-party';
import { MediaBackendUnsupported } from '../../../media-app/media-server/port';
import type { EndpointEnd, RxTimeoutEvent } from '../../../media-engine';
import type { FsmrfCallEndpoint } from '../../../media-app/media-server/fsmrf/backend';
import { loopbackSdp } from '../../../testkit/sdp';
import { sleep } from '../../../testkit/media-engine/support';
import { useFsmrfSuite, type FsmrfSuite } from '../../../testkit/esl/fsmrf-suite';
import { RtpParty } from './rtp-party';

const TIMEOUT_MS = 1000;
/**
 * the engine looks at its watches every 250 ms (rx-watch.ts), then the switch's BYE and events: room for a
 * CI machine running two shards on two cores (the claim is "not before the timeout"; "soon" only bounds a hang)
 */
const LATE_MS = 250 + 4000;

/** A leg's events, in order, with when they came. */
type Seen = { name: 'rxTimeout' | 'destroy'; at: number; silentMs?: number; message?: string }[];
/** A leg of the suite's backend and its far end: `to` the leg's RTP address, `partyPort` the party's (its SDP). */
type WatchedLeg = { party: RtpParty; leg: FsmrfCallEndpoint; to: { address: string; port: number }; partyPort: number; seen: Seen; ended: Promise<void> };

/** Each test's leg, its party and the events it reports ('rxTimeout', then 'destroy': `ended`), as hooks. */
function useWatchedLeg(suite: FsmrfSuite): WatchedLeg {
  const w = {} as WatchedLeg;
  beforeEach(async () => {
    const party = new RtpParty();
    const partyPort = await party.open();
    const leg = await suite.backend.createEndpoint({ remoteSdp: loopbackSdp(partyPort) });
    const seen: Seen = [];
    leg.on('rxTimeout', (e: RxTimeoutEvent) => seen.push({ name: 'rxTimeout', at: performance.now(), silentMs: e.silentMs }));
    const ended = new Promise<void>((resolve) =>
      leg.once('destroy', (e: EndpointEnd) => {
        seen.push({ name: 'destroy', at: performance.now(), message: e.message ?? '' });
        resolve();
      }),
    );
    Object.assign(w, { party, leg, to: { address: '127.0.0.1', port: leg.local.port }, partyPort, seen, ended });
  });
  afterEach(async () => {
    w.party.close();
    await w.leg.destroy().catch(() => undefined);
  });
  return w;
}

describe('fsmrf backend: the receive watch (the switch ends a silent channel with MEDIA_TIMEOUT)', function () {
  this.timeout(30_000);
  const suite = useFsmrfSuite({ connect: { mediaTimeoutMs: TIMEOUT_MS } });
  const w = useWatchedLeg(suite);

  it('a party that stops sending: rxTimeout then destroy (MEDIA_TIMEOUT), after the timeout and not before', async () => {
    await w.leg.watchRx(TIMEOUT_MS);
    await w.party.talk(w.to, 600);
    const stopped = w.party.lastSent;
    await w.ended;
    expect(w.seen.map((s) => s.name)).to.deep.equal(['rxTimeout', 'destroy']);
    expect(w.seen[0]!.silentMs).to.equal(TIMEOUT_MS);
    expect(w.seen[1]!.message).to.contain('MEDIA_TIMEOUT');
    expect(w.seen[0]!.at - stopped, 'not before the timeout').to.be.at.least(TIMEOUT_MS);
    expect(w.seen[0]!.at - stopped, 'soon after it').to.be.below(TIMEOUT_MS + LATE_MS);
  });

  it('a party that pauses for less than the timeout and resumes keeps its leg; once it stops, the leg ends', async () => {
    await w.leg.watchRx(TIMEOUT_MS);
    // 2 s in all, past twice the timeout: pauses of 0.4 × the timeout between its talk spurts (room for a
    // stalled sender's timer: a real gap of 0.4 + a stall still under the timeout)
    for (let i = 0; i < 3; i++) {
      await w.party.talk(w.to, 400);
      if (i < 2) await sleep(0.4 * TIMEOUT_MS);
    }
    expect(w.seen, 'nothing while it talks').to.deep.equal([]);
    expect(w.leg.destroyed).to.equal(false);
    const stopped = w.party.lastSent;
    await w.ended;
    expect(w.seen.map((s) => s.name)).to.deep.equal(['rxTimeout', 'destroy']);
    expect(w.seen[0]!.at - stopped).to.be.within(TIMEOUT_MS, TIMEOUT_MS + LATE_MS);
  });

  it('watchRx of another timeout, or 0, is refused (the switch cannot change it mid-call); the leg stays watched', async () => {
    for (const ms of [0, 2 * TIMEOUT_MS]) {
      const err = await w.leg.watchRx(ms).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, `watchRx(${ms})`).to.be.instanceOf(MediaBackendUnsupported);
      expect((err as Error).message).to.match(/media_timeout only when it activates RTP/);
    }
    await w.party.talk(w.to, 200);
    const stopped = w.party.lastSent;
    await w.ended;
    expect(w.seen.map((s) => s.name)).to.deep.equal(['rxTimeout', 'destroy']);
    expect(w.seen[0]!.at - stopped).to.be.within(TIMEOUT_MS, TIMEOUT_MS + LATE_MS);
  });

  it('a re-INVITE that finds media_timeout 0 keeps the watch (set only when non-zero) and starts its count again', async () => {
    const res = (await w.leg.fs.api('uuid_setvar', `${w.leg.uuid} media_timeout 0`)) as { getBody(): string };
    expect(res.getBody()).to.match(/^\+OK/);
    await w.party.talk(w.to, 200);
    // the switch re-arms while it handles the re-INVITE, before its answer reaches us: the watch cannot end
    // the leg earlier than TIMEOUT after the re-INVITE is sent, nor later than TIMEOUT + LATE after its answer
    const sent = performance.now();
    await w.leg.modify(loopbackSdp(w.partyPort));
    const reinvited = performance.now();
    await w.ended;
    expect(w.seen.map((s) => s.name)).to.deep.equal(['rxTimeout', 'destroy']);
    expect(w.seen[1]!.at - sent, 'not before the timeout').to.be.at.least(TIMEOUT_MS);
    expect(w.seen[1]!.at - reinvited, 'soon after it').to.be.below(TIMEOUT_MS + LATE_MS);
  });

  it('a watch that cannot be armed: watchParty logs it at error with the call and counts it (not swallowed)', async () => {
    type Line = { level: number; msg: string; call?: string; reason?: string };
    let logged!: (l: Line) => void;
    const first = new Promise<Line>((resolve) => (logged = resolve));
    const logger = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _enc, done) => (logged(JSON.parse(chunk.toString()) as Line), done()) }));
    const unsupported = async () => (await platformMetrics.mediaWatchUnarmed.get()).values.find((v) => v.labels.reason === 'unsupported')?.value ?? 0;
    const before = await unsupported();
    // a timeout other than the one the leg was made with: the switch would not read it (watchRx rejects)
    watchParty(w.leg, 1500, { logger, call: 'call-1' });
    let timer: NodeJS.Timeout | undefined;
    const swallowed = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('nothing logged within 3 s: the refusal was swallowed')), 3000)));
    const line = await Promise.race([first, swallowed]).finally(() => clearTimeout(timer));
    expect(line.level, 'error').to.equal(50);
    expect(line.call).to.equal('call-1');
    expect(line.reason).to.equal('unsupported');
    expect(line.msg).to.match(/not armed/);
    expect(await unsupported()).to.equal(before + 1);
  });
});

describe('fsmrf backend: the switch reads the media timeout only when it activates the RTP (as FreeSWITCH)', function () {
  this.timeout(30_000);
  // legs made with no timeout on their INVITE
  const suite = useFsmrfSuite();
  const w = useWatchedLeg(suite);

  it('watchRx(0) on a leg made with none resolves; any timeout is refused', async () => {
    await w.leg.watchRx(0);
    const err = await w.leg.watchRx(TIMEOUT_MS).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(MediaBackendUnsupported);
    expect((err as Error).message).to.contain('made with none');
  });

  it('uuid_setvar media_timeout after the answer arms nothing; the next re-INVITE does', async () => {
    const res = (await w.leg.fs.api('uuid_setvar', `${w.leg.uuid} media_timeout ${TIMEOUT_MS}`)) as { getBody(): string };
    expect(res.getBody()).to.match(/^\+OK/);
    await w.party.talk(w.to, 200);
    await sleep(2.5 * TIMEOUT_MS);
    expect(w.seen, 'a value set mid-call is not read until the RTP is activated again').to.deep.equal([]);
    expect(w.leg.destroyed).to.equal(false);
    // a re-INVITE activates the RTP again (switch_core_media_activate_rtp → check_media_timeout_params)
    // the switch re-arms while it handles the re-INVITE, before its answer reaches us: the watch cannot end
    // the leg earlier than TIMEOUT after the re-INVITE is sent, nor later than TIMEOUT + LATE after its answer
    const sent = performance.now();
    await w.leg.modify(loopbackSdp(w.partyPort));
    const reinvited = performance.now();
    await w.ended;
    expect(w.seen.map((s) => s.name)).to.deep.equal(['rxTimeout', 'destroy']);
    expect(w.seen[1]!.message).to.contain('MEDIA_TIMEOUT');
    expect(w.seen[1]!.at - sent, 'not before the timeout').to.be.at.least(TIMEOUT_MS);
    expect(w.seen[1]!.at - reinvited, 'soon after it').to.be.below(TIMEOUT_MS + LATE_MS);
  });

  it('rtp_timeout_sec (seconds) set by the set application is read at the re-INVITE too', async () => {
    await w.leg.fs.execute('set', 'rtp_timeout_sec=1');
    await w.party.talk(w.to, 200);
    // the switch re-arms while it handles the re-INVITE, before its answer reaches us: the watch cannot end
    // the leg earlier than TIMEOUT after the re-INVITE is sent, nor later than TIMEOUT + LATE after its answer
    const sent = performance.now();
    await w.leg.modify(loopbackSdp(w.partyPort));
    const reinvited = performance.now();
    await w.ended;
    expect(w.seen.map((s) => s.name)).to.deep.equal(['rxTimeout', 'destroy']);
    expect(w.seen[1]!.message).to.contain('MEDIA_TIMEOUT');
    expect(w.seen[1]!.at - sent, 'not before the timeout').to.be.at.least(1000);
    expect(w.seen[1]!.at - reinvited, 'soon after it').to.be.below(1000 + LATE_MS);
  });
});
