// esl/media-timeout.ts's reading of the channel variables, as FreeSWITCH 1.10's check_media_timeout_params
// and the deprecated rtp_timeout_sec read them (C's atoi); the switch's watch itself runs in
// test/media-app/media-server/fsmrf-rx-watch.test.ts (real RTP, the channel ended with MEDIA_TIMEOUT).
import { expect } from 'chai';
import { mediaHoldTimeoutMs, mediaTimeoutMs } from '../../esl/media-timeout';
import { sdpHoldMode } from '../../media-engine';

const ms = (vars: Record<string, string>) => mediaTimeoutMs(new Map(Object.entries(vars)));

describe('esl: the media timeout variables', () => {
  it('media_timeout is ms, rtp_timeout_sec seconds; none or 0 is off', () => {
    expect(ms({})).to.equal(0);
    expect(ms({ media_timeout: '1500' })).to.equal(1500);
    expect(ms({ rtp_timeout_sec: '2' })).to.equal(2000);
    expect(ms({ media_timeout: '0' })).to.equal(0);
  });
  it('media_timeout_audio, when set, is read over media_timeout (also as 0)', () => {
    expect(ms({ media_timeout: '1500', media_timeout_audio: '800' })).to.equal(800);
    expect(ms({ media_timeout: '1500', media_timeout_audio: '0' })).to.equal(0);
  });
  it('both armed: the shorter ends the channel (FreeSWITCH arms a timer and a missed-packet count)', () => {
    expect(ms({ media_timeout: '5000', rtp_timeout_sec: '2' })).to.equal(2000);
    expect(ms({ media_timeout: '900', rtp_timeout_sec: '2' })).to.equal(900);
  });
  it("values as C's atoi reads them: the leading integer, else 0; negative is off", () => {
    expect(ms({ media_timeout: '1200ms' })).to.equal(1200);
    expect(ms({ media_timeout: 'x' })).to.equal(0);
    expect(ms({ media_timeout: '-5' })).to.equal(0);
  });
});

describe('esl: the hold timeout variables and what an offer says of the far end', () => {
  const hold = (vars: Record<string, string>) => mediaHoldTimeoutMs(new Map(Object.entries(vars)));
  const sdp = (dir: string, address = '127.0.0.1', port = 4000) => `v=0\r\no=- 1 2 IN IP4 ${address}\r\ns=-\r\nc=IN IP4 ${address}\r\nt=0 0\r\nm=audio ${port} RTP/AVP 0\r\n${dir}`;
  it('media_hold_timeout (ms), media_hold_timeout_audio over it; unset: null (the value stays)', () => {
    expect(hold({})).to.equal(null);
    expect(hold({ media_hold_timeout: '9000' })).to.equal(9000);
    expect(hold({ media_hold_timeout: '9000', media_hold_timeout_audio: '4000' })).to.equal(4000);
    expect(hold({ media_hold_timeout: 'x' })).to.equal(0);
  });
  it('sendonly, inactive and c=0.0.0.0 hold; recvonly is its own; sendrecv or none resumes; no audio: null (sdpHoldMode)', () => {
    expect(sdpHoldMode(sdp('a=sendonly\r\n'))).to.equal('holds');
    expect(sdpHoldMode(sdp('a=inactive\r\n'))).to.equal('holds');
    expect(sdpHoldMode(sdp('a=sendrecv\r\n', '0.0.0.0'))).to.equal('holds');
    expect(sdpHoldMode(sdp('a=recvonly\r\n'))).to.equal('recvonly');
    expect(sdpHoldMode(sdp('a=sendrecv\r\n'))).to.equal('sendrecv');
    expect(sdpHoldMode(sdp(''))).to.equal('sendrecv');
    expect(sdpHoldMode(sdp('', '127.0.0.1', 0))).to.equal(null);
    expect(sdpHoldMode('garbage')).to.equal(null);
    expect(sdpHoldMode('v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n'), 'no audio').to.equal(null);
  });
});
