// The receive watch on the fsmrf backend (FsmrfCallEndpoint.watchRx → the switch's `media_timeout`,
// esl/media-timeout.ts): a far end of real RTP on loopback (a UDP socket of the test sending 20 ms PCMU
// packets) talks, pauses and stops; the switch ends the channel with MEDIA_TIMEOUT after the timeout and
// not before, the leg reporting 'rxTimeout' then 'destroy'. A pause shorter than the timeout keeps the leg;
// rtp_timeout_sec (s, FreeSWITCH's deprecated variable) set through fsmrf's `set` arms it too; 0 disarms it.
// A watch that cannot be armed is logged at error and counted by media-app's watchParty, never swallowed.
import { expect } from 'chai';
import { Writable } from 'node:stream';
import pino from 'pino';
import { platformMetrics } from '../../../core/metrics';
import { watchParty } from '../../../media-app/call/dead-party';
import type { EndpointEnd, RxTimeoutEvent } from '../../../media-engine';
import type { FsmrfCallEndpoint } from '../../../media-app/media-server/fsmrf/backend';
import { loopbackSdp } from '../../../testkit/sdp';
import { sleep } from '../../../testkit/media-engine/support';
import { useFsmrfSuite } from './fsmrf-suite';
import { RtpParty } from './rtp-party';

const TIMEOUT_MS = 1000;
/** the engine looks at its watches every 250 ms (rx-watch.ts), then the switch's BYE and events: room for a loaded machine */
const LATE_MS = 250 + 1000;

describe('fsmrf backend: the receive watch (the switch ends a silent channel with MEDIA_TIMEOUT)', function () {
  this.timeout(30_000);
  const suite = useFsmrfSuite();
  let party: RtpParty;
  let leg: FsmrfCallEndpoint;
  let to: { address: string; port: number };
  /** the leg's events, in order, with when they came */
  let seen: { name: 'rxTimeout' | 'destroy'; at: number; silentMs?: number; message?: string }[];
  let ended: Promise<void>;

  beforeEach(async () => {
    party = new RtpParty();
    const port = await party.open();
    leg = await suite.backend.createEndpoint({ remoteSdp: loopbackSdp(port) });
    to = { address: '127.0.0.1', port: leg.local.port };
    seen = [];
    leg.on('rxTimeout', (e: RxTimeoutEvent) => seen.push({ name: 'rxTimeout', at: performance.now(), silentMs: e.silentMs }));
    ended = new Promise((resolve) =>
      leg.once('destroy', (e: EndpointEnd) => {
        seen.push({ name: 'destroy', at: performance.now(), message: e.message ?? '' });
        resolve();
      }),
    );
  });
  afterEach(async () => {
    party.close();
    await leg.destroy().catch(() => undefined);
  });

  it('a party that stops sending: rxTimeout then destroy (MEDIA_TIMEOUT), after the timeout and not before', async () => {
    await leg.watchRx(TIMEOUT_MS);
    await party.talk(to, 600);
    const stopped = party.lastSent;
    await ended;
    expect(seen.map((s) => s.name)).to.deep.equal(['rxTimeout', 'destroy']);
    expect(seen[0]!.silentMs).to.equal(TIMEOUT_MS);
    expect(seen[1]!.message).to.contain('MEDIA_TIMEOUT');
    expect(seen[0]!.at - stopped, 'not before the timeout').to.be.at.least(TIMEOUT_MS);
    expect(seen[0]!.at - stopped, 'soon after it').to.be.below(TIMEOUT_MS + LATE_MS);
  });

  it('a party that pauses for less than the timeout and resumes keeps its leg; once it stops, the leg ends', async () => {
    await leg.watchRx(TIMEOUT_MS);
    // 2.6 s in all, past twice the timeout: pauses of 0.7 × the timeout between its talk spurts
    for (let i = 0; i < 3; i++) {
      await party.talk(to, 400);
      if (i < 2) await sleep(0.7 * TIMEOUT_MS);
    }
    expect(seen, 'nothing while it talks').to.deep.equal([]);
    expect(leg.destroyed).to.equal(false);
    const stopped = party.lastSent;
    await ended;
    expect(seen.map((s) => s.name)).to.deep.equal(['rxTimeout', 'destroy']);
    expect(seen[0]!.at - stopped).to.be.within(TIMEOUT_MS, TIMEOUT_MS + LATE_MS);
  });

  it('rtp_timeout_sec (seconds) set by the set application arms the same watch', async () => {
    await leg.fs.execute('set', 'rtp_timeout_sec=1');
    await party.talk(to, 400);
    const stopped = party.lastSent;
    await ended;
    expect(seen.map((s) => s.name)).to.deep.equal(['rxTimeout', 'destroy']);
    expect(seen[1]!.message).to.contain('MEDIA_TIMEOUT');
    expect(seen[1]!.at - stopped).to.be.within(1000, 1000 + LATE_MS);
  });

  it('watchRx(0) disarms it: a silent party is not ended past 2.5 × the timeout', async () => {
    await leg.watchRx(TIMEOUT_MS);
    await party.talk(to, 200);
    await leg.watchRx(0);
    await sleep(2.5 * TIMEOUT_MS);
    expect(seen).to.deep.equal([]);
    expect(leg.destroyed).to.equal(false);
  });

  it('a watch that cannot be armed: watchParty logs it at error with the call and counts it (not swallowed)', async () => {
    type Line = { level: number; msg: string; call?: string; reason?: string };
    let logged!: (l: Line) => void;
    const first = new Promise<Line>((resolve) => (logged = resolve));
    const logger = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _enc, done) => (logged(JSON.parse(chunk.toString()) as Line), done()) }));
    const failed = async () => (await platformMetrics.mediaWatchUnarmed.get()).values.find((v) => v.labels.reason === 'failed')?.value ?? 0;
    const before = await failed();
    // a timeout the switch's variable cannot take (not whole ms): the leg's watchRx rejects
    watchParty(leg, 1500.5, { logger, call: 'call-1' });
    let timer: NodeJS.Timeout | undefined;
    const swallowed = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('nothing logged within 3 s: the failure was swallowed')), 3000)));
    const line = await Promise.race([first, swallowed]).finally(() => clearTimeout(timer));
    expect(line.level, 'error').to.equal(50);
    expect(line.call).to.equal('call-1');
    expect(line.reason).to.equal('failed');
    expect(line.msg).to.match(/not armed/);
    expect(await failed()).to.equal(before + 1);
  });
});
