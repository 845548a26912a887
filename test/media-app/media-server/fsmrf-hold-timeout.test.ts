// The hold timeout on the fsmrf backend (esl/media-timeout.ts, as FreeSWITCH's switch_core_media_toggle_hold
// and check_media_timeout_params): a party that holds (its re-INVITE offers sendonly or inactive) and sends
// nothing is hung up with MEDIA_TIMEOUT after media_hold_timeout (10 × media_timeout unless set), not after
// the media timeout; resumed (sendrecv), the media timeout is back. The backend sets the channel's
// media_timeout to 0 before a held SDP (fsmrf/hold-timeout.ts), as FreeSWITCH needs for the hold timeout to
// stay in force after activate_rtp's read. Real RTP on loopback (RtpParty), our switch, fsmrf unmodified.
import { expect } from 'chai';
import type { EndpointEnd } from '../../../media-engine';
import type { FsmrfCallEndpoint } from '../../../media-app/media-server/fsmrf/backend';
import { loopbackSdp } from '../../../testkit/sdp';
import { sleep } from '../../../testkit/media-engine/support';
import { useFsmrfSuite } from '../../../testkit/esl/fsmrf-suite';
import { RtpParty } from './rtp-party';

/**
 * The leg's media timeout. A re-INVITE that arms it (a resume, a sendrecv one) must be answered, and fsmrf's
 * read of the channel's variables after the 200 done, before that much silence has passed, or the switch
 * hangs up first and the modify fails with the closed socket: 1 s leaves room for a loaded machine's stalls
 * (300 ms did not: CI's run of 91e12c33 lost that race, reproduced by stopping the test process 0.45 s in
 * every 0.75 s). The hold timeout is then 10 s.
 */
const TIMEOUT_MS = 1000;
/** the engine's look every 250 ms, then the switch's BYE and events, with room for a loaded machine */
const LATE_MS = 250 + 4000;
/** the media_hold_timeout the second test sets: between the media timeout and 10 × it */
const HOLD_VAR_MS = 3 * TIMEOUT_MS;

describe('fsmrf backend: a held party is timed out after media_hold_timeout (as FreeSWITCH)', function () {
  this.timeout(30_000);
  const suite = useFsmrfSuite({ connect: { mediaTimeoutMs: TIMEOUT_MS } });
  let party: RtpParty;
  let leg: FsmrfCallEndpoint;
  let to: { address: string; port: number };
  let partyPort: number;
  /** when the switch ended the channel, and why */
  let ended: Promise<{ at: number; message: string }>;

  beforeEach(async () => {
    party = new RtpParty();
    partyPort = await party.open();
    leg = await suite.backend.createEndpoint({ remoteSdp: loopbackSdp(partyPort) });
    to = { address: '127.0.0.1', port: leg.local.port };
    ended = new Promise((resolve) => leg.once('destroy', (e: EndpointEnd) => resolve({ at: performance.now(), message: e.message ?? '' })));
  });
  afterEach(async () => {
    party.close();
    await leg.destroy().catch(() => undefined);
  });

  /** The party's re-INVITE with `direction` (its SDP version `version`), through the backend. */
  const reinvite = (direction: string, version: number) => leg.modify(loopbackSdp(partyPort, { version, direction }));

  // the switch arms its watch while it handles a re-INVITE, before the answer reaches us: a bound "not
  // before" counts from the re-INVITE's send, a bound "soon after" from its answer
  it('a party that holds (sendonly) and sends nothing: ended after 10 × the media timeout, not after it', async () => {
    await party.talk(to, 200);
    const sent = performance.now();
    await reinvite('sendonly', 2);
    const held = performance.now();
    const end = await ended;
    expect(end.message).to.contain('MEDIA_TIMEOUT');
    expect(end.at - sent, 'not before the hold timeout').to.be.at.least(10 * TIMEOUT_MS);
    expect(end.at - held, 'soon after it').to.be.below(10 * TIMEOUT_MS + LATE_MS);
  });

  it('media_hold_timeout set on the channel is read at the next activation and used at a hold after it (inactive)', async () => {
    const res = (await leg.fs.api('uuid_setvar', `${leg.uuid} media_hold_timeout ${HOLD_VAR_MS}`)) as { getBody(): string };
    expect(res.getBody()).to.match(/^\+OK/);
    await party.talk(to, 200);
    // a re-INVITE activates the RTP: the read takes the variable (the hold toggled in the same
    // re-INVITE would still use the value before it: switch_core_media_toggle_hold runs first)
    await reinvite('sendrecv', 2);
    await party.talk(to, 200);
    const sent = performance.now();
    await reinvite('inactive', 3);
    const held = performance.now();
    const end = await ended;
    expect(end.message).to.contain('MEDIA_TIMEOUT');
    // the variable's 3 s, well before the 10 × the media timeout it would be without it
    expect(end.at - sent, 'not before media_hold_timeout').to.be.at.least(HOLD_VAR_MS);
    expect(end.at - held, 'soon after it, before 10 × the media timeout').to.be.below(HOLD_VAR_MS + LATE_MS);
  });

  it('resumed (sendrecv) before the hold timeout: the media timeout is back, counted from the resume', async () => {
    await party.talk(to, 200);
    await reinvite('sendonly', 2);
    // held and silent for 2 × the media timeout: not ended
    await sleep(2 * TIMEOUT_MS);
    expect(leg.destroyed, 'held past the media timeout').to.equal(false);
    const sent = performance.now();
    await reinvite('sendrecv', 3);
    const resumed = performance.now();
    const end = await ended;
    expect(end.message).to.contain('MEDIA_TIMEOUT');
    // not at once (the count starts again), and long before the hold timeout would end it, whether still
    // counted from the hold (8 × the media timeout after the resume) or armed again by it (10 ×)
    expect(end.at - sent, 'not before the media timeout').to.be.at.least(TIMEOUT_MS);
    expect(end.at - resumed, 'soon after it').to.be.below(TIMEOUT_MS + LATE_MS);
  });
});
