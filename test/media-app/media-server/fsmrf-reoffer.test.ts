// A re-offer of ours on an fsmrf leg (media-app/media-server/fsmrf/reoffer.ts): the switch's SDP with its
// o= version past every one the party was given (RFC 3264 §8), the rest of the SDP unchanged.
import { expect } from 'chai';
import { PartyVersions, sdpVersion, withVersion } from '../../../media-app/media-server/fsmrf/reoffer';

const sdp = (version: string) => `v=0\r\no=FreeSWITCH 1732700000 ${version} IN IP4 127.0.0.1\r\ns=FreeSWITCH\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 20000 RTP/AVP 0 101\r\na=sendrecv\r\n`;

describe('fsmrf re-offer: the switch SDP with a raised o= version', () => {
  it('reads and sets the o= version, beyond 2^53 too, and leaves the rest as it was', () => {
    expect(sdpVersion(sdp('1732700001'))).to.equal(1732700001n);
    expect(sdpVersion('v=0\r\ns=x\r\n')).to.equal(null);
    expect(withVersion(sdp('7'), 9007199254740993n)).to.equal(sdp('9007199254740993'));
    expect(() => withVersion('v=0\r\n', 1n)).to.throw(/no o= line/);
  });

  it('a re-offer goes past the switch own version and every SDP the party was given', () => {
    const v = new PartyVersions();
    v.saw(sdp('5'));
    expect(v.reoffer(sdp('5'))).to.equal(sdp('6'));
    // the switch answered the party's answer with its own 6: the next re-offer is 7, never 6 again
    v.saw(sdp('6'));
    expect(v.reoffer(sdp('6'))).to.equal(sdp('7'));
    // a switch whose version jumped ahead: past it
    expect(v.reoffer(sdp('40'))).to.equal(sdp('41'));
    // the switch's version behind what the party was given: past what the party has
    expect(v.reoffer(sdp('3'))).to.equal(sdp('42'));
  });

  it('no SDP or one without o= is refused by name', () => {
    const v = new PartyVersions();
    expect(() => v.reoffer('')).to.throw(/no SDP for this leg yet/);
    expect(() => v.reoffer(null)).to.throw(/no SDP for this leg yet/);
    expect(() => v.reoffer('v=0\r\nm=audio 1 RTP/AVP 0\r\n')).to.throw(/has no o= line/);
  });
});
