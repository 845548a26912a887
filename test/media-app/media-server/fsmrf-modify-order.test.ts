// Two re-INVITEs of a party on one fsmrf leg in quick succession (a hold then its unhold, each handed to
// the leg's modify before the first finished): each sets the channel's media_timeout for its SDP
// (fsmrf/hold-timeout.ts) and then sends its SDP to the switch (fsmrf's Endpoint.modify). Run
// interleaved, the second's media_timeout could be skipped (the first's not yet recorded) or the two
// re-INVITEs to the switch cross; run one after the other per leg, the final state is the second's: the
// switch holds its SDP, its media_timeout, and answered it sendrecv. Our switch, fsmrf unmodified, real
// RTP on loopback.
import { expect } from 'chai';
import type { FsmrfCallEndpoint } from '../../../media-app/media-server/fsmrf/backend';
import { loopbackSdp } from '../../../testkit/sdp';
import { useFsmrfSuite } from '../../../testkit/esl/fsmrf-suite';
import { RtpParty } from './rtp-party';

const TIMEOUT_MS = 5000;

describe('fsmrf backend: two re-INVITEs of the party on one leg in quick succession', function () {
  this.timeout(30_000);
  const suite = useFsmrfSuite({ connect: { mediaTimeoutMs: TIMEOUT_MS } });
  let party: RtpParty;
  let leg: FsmrfCallEndpoint;
  let partyPort: number;

  beforeEach(async () => {
    party = new RtpParty();
    partyPort = await party.open();
    leg = await suite.backend.createEndpoint({ remoteSdp: loopbackSdp(partyPort) });
  });
  afterEach(async () => {
    party.close();
    await leg.destroy().catch(() => undefined);
  });

  /** The switch channel's variable `name`. */
  const variable = (name: string) => {
    const ch = suite.rig.esl.channels.get(leg.uuid);
    if (!ch) throw new Error(`no channel ${leg.uuid} on the switch`);
    return ch.channel.variables.get(name);
  };

  for (const [first, second] of [
    ['sendonly', 'sendrecv'],
    ['sendrecv', 'inactive'],
  ] as const)
    it(`${first} then ${second}, the second sent before the first is done: the switch ends with the second's SDP and media_timeout`, async () => {
      if (first === 'sendrecv') {
        // start from a hold, so that both re-INVITEs change the media_timeout
        await leg.modify(loopbackSdp(partyPort, { version: 2, direction: 'sendonly' }));
        expect(variable('media_timeout')).to.equal('0');
      }
      const a = leg.modify(loopbackSdp(partyPort, { version: 3, direction: first }));
      const b = leg.modify(loopbackSdp(partyPort, { version: 4, direction: second }));
      const [answerA, answerB] = await Promise.all([a, b]);
      const answer = { sendonly: 'recvonly', sendrecv: 'sendrecv', inactive: 'inactive' } as const;
      expect(answerA, "the switch's answer to the first").to.match(new RegExp(`^a=${answer[first]}\\s*$`, 'm'));
      expect(answerB, "the switch's answer to the second").to.match(new RegExp(`^a=${answer[second]}\\s*$`, 'm'));
      expect(variable('switch_r_sdp'), "the party's SDP the switch holds").to.match(/^o=- 1 4 /m);
      expect(variable('media_timeout'), "the channel's media_timeout").to.equal(second === 'sendrecv' ? String(TIMEOUT_MS) : '0');
    });
});
