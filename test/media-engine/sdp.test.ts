import { expect } from 'chai';
import { applyAnswer, createAnswer, createOffer, parseSdp, SdpError } from '../../media-engine/sdp/sdp';

const offer = (m: string, extra: string[] = [], c = '10.0.0.5') => ['v=0', 'o=alice 1 1 IN IP4 10.0.0.5', 's=-', `c=IN IP4 ${c}`, 't=0 0', m, ...extra].join('\r\n') + '\r\n';
const local = { address: '127.0.0.1', port: 20000 };

describe('media-engine SDP offer/answer', () => {
  it('answers PCMA + telephone-event with the offerer order and payload types', () => {
    const { sdp, media } = createAnswer(offer('m=audio 4000 RTP/AVP 8 0 96', ['a=rtpmap:96 telephone-event/8000', 'a=fmtp:96 0-15', 'a=ptime:20']), local);
    expect(media).to.include({
      codec: 'PCMA',
      payloadType: 8,
      dtmfPayloadType: 96,
      remoteAddress: '10.0.0.5',
      remotePort: 4000,
      remoteRtcpPort: 4001,
      direction: 'sendrecv',
      send: true,
      receive: true,
    });
    expect(sdp).to.contain('m=audio 20000 RTP/AVP 8 96\r\n');
    expect(sdp).to.contain('a=rtpmap:96 telephone-event/8000');
    expect(sdp).to.contain('a=fmtp:96 0-15');
    expect(sdp).to.contain('c=IN IP4 127.0.0.1');
  });

  it('answers without telephone-event when none is offered, honouring ptime and a=rtcp', () => {
    const { sdp, media } = createAnswer(offer('m=audio 4000 RTP/AVP 0', ['a=ptime:30', 'a=rtcp:4999']), local);
    expect(media.dtmfPayloadType).to.equal(null);
    expect(media.ptime).to.equal(30);
    expect(media.remoteRtcpPort).to.equal(4999);
    expect(sdp).to.contain('a=ptime:30');
    expect(sdp).to.not.contain('telephone-event');
  });

  it('asks for RTCP-XR VoIP metrics when the offer signals XR (session or audio level), and only then', () => {
    const xr = 'a=rtcp-xr:rcvr-rtt=all:10000 stat-summary=loss,dup,jitt,TTL voip-metrics';
    expect(createAnswer(offer('m=audio 4000 RTP/AVP 0', [xr]), local).sdp).to.contain('a=rtcp-xr:voip-metrics\r\n');
    const sessionLevel = offer('m=audio 4000 RTP/AVP 0').replace('t=0 0\r\n', `t=0 0\r\n${xr}\r\n`);
    expect(createAnswer(sessionLevel, local).sdp).to.contain('a=rtcp-xr:voip-metrics');
    expect(createAnswer(offer('m=audio 4000 RTP/AVP 0'), local).sdp).to.not.contain('rtcp-xr');
    expect(createOffer(local)).to.not.contain('rtcp-xr');
  });

  it('puts us on hold when the far end holds (sendonly -> recvonly, c=0.0.0.0, inactive)', () => {
    const held = createAnswer(offer('m=audio 4000 RTP/AVP 0', ['a=sendonly']), local);
    expect(held.media).to.include({ direction: 'recvonly', send: false, receive: true });
    expect(held.sdp).to.contain('a=recvonly');
    const old = createAnswer(offer('m=audio 4000 RTP/AVP 0', [], '0.0.0.0'), local);
    expect(old.media.send).to.equal(false);
    const inactive = createAnswer(offer('m=audio 4000 RTP/AVP 0', ['a=inactive']), local);
    expect(inactive.media).to.include({ direction: 'inactive', send: false, receive: false });
    const recvonly = createAnswer(offer('m=audio 4000 RTP/AVP 0', ['a=recvonly']), local);
    expect(recvonly.media).to.include({ direction: 'sendonly', send: true, receive: false });
  });

  it('media-level c= wins over session-level, dynamic PCMU mapping is recognised', () => {
    const { media } = createAnswer(offer('m=audio 4000 RTP/AVP 100', ['c=IN IP4 10.9.9.9', 'a=rtpmap:100 PCMU/8000']), local);
    expect(media).to.include({ remoteAddress: '10.9.9.9', codec: 'PCMU', payloadType: 100 });
  });

  it('rejects offers it cannot answer', () => {
    expect(() => createAnswer(offer('m=audio 4000 RTP/AVP 18', ['a=rtpmap:18 G729/8000']), local)).to.throw(SdpError, /no common codec/);
    expect(() => createAnswer(offer('m=audio 4000 RTP/SAVP 0'), local)).to.throw(SdpError, /transport/);
    expect(() => createAnswer(offer('m=video 4000 RTP/AVP 96'), local)).to.throw(SdpError, /no audio/);
    expect(() => createAnswer('hello', local)).to.throw(SdpError);
    expect(() => createAnswer('', local)).to.throw(SdpError);
    expect(() => parseSdp('v=0\r\nm=audio x RTP/AVP 0\r\n')).to.throw(SdpError);
    expect(() => createAnswer(offer('m=audio 4000 RTP/AVP 0', [], 'x').replace('c=IN IP4 x', 'c=IN'), local)).to.throw(SdpError);
  });

  it('offer then answer: our offer lists PCMU, PCMA, telephone-event; the answer picks one', () => {
    const o = createOffer({ ...local, codecs: ['PCMA', 'PCMU'] });
    expect(o).to.contain('m=audio 20000 RTP/AVP 8 0 101');
    const answer = createAnswer(o, { address: '10.1.1.1', port: 30000 }).sdp;
    const media = applyAnswer(answer, local);
    expect(media).to.include({ codec: 'PCMA', payloadType: 8, dtmfPayloadType: 101, remotePort: 30000, remoteAddress: '10.1.1.1' });
    expect(() => applyAnswer(offer('m=audio 4000 RTP/AVP 18'), local)).to.throw(SdpError);
  });
  it("answers the offerer's first codec we take: G722, opus (RFC 7587 fmtp), telephone-event at that codec's clock", () => {
    const g = createAnswer(offer('m=audio 4000 RTP/AVP 9 0 101', ['a=rtpmap:9 G722/8000', 'a=rtpmap:101 telephone-event/8000']), local);
    expect(g.media).to.include({ codec: 'G722', payloadType: 9, clockRate: 8000, dtmfPayloadType: 101 });
    expect(g.sdp).to.contain('m=audio 20000 RTP/AVP 9 101\r\n').and.contain('a=rtpmap:9 G722/8000');
    const o = createAnswer(
      offer('m=audio 4000 RTP/AVP 111 0 101 110', [
        'a=rtpmap:111 OPUS/48000/2',
        'a=fmtp:111 maxplaybackrate=48000;useinbandfec=1',
        'a=rtpmap:101 telephone-event/8000',
        'a=rtpmap:110 telephone-event/48000',
      ]),
      local,
    );
    expect(o.media).to.include({ codec: 'opus', payloadType: 111, clockRate: 48000, dtmfPayloadType: 110, fmtp: 'maxplaybackrate=48000;useinbandfec=1' });
    expect(o.sdp).to.contain('m=audio 20000 RTP/AVP 111 110\r\n').and.contain('a=rtpmap:111 opus/48000/2').and.contain('a=rtpmap:110 telephone-event/48000');
    expect(o.sdp).to.match(/a=fmtp:111 maxplaybackrate=16000;sprop-maxcapturerate=16000;stereo=0;useinbandfec=1\r\n/);
    // opus offered with telephone-event at 8000 only (Debian 12's baresip): answered at the clock offered,
    // the events' durations then run on 8000 while the audio runs on 48000 (as Asterisk and pjsip do)
    const te8k = createAnswer(offer('m=audio 4000 RTP/AVP 96 101', ['a=rtpmap:96 opus/48000/2', 'a=rtpmap:101 telephone-event/8000', 'a=fmtp:101 0-15']), local);
    expect(te8k.media).to.include({ codec: 'opus', clockRate: 48000, dtmfPayloadType: 101, dtmfClockRate: 8000 });
    expect(te8k.sdp).to.contain('m=audio 20000 RTP/AVP 96 101\r\n').and.contain('a=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-15\r\n');
    // both clocks offered: the codec's own wins
    expect(o.media).to.include({ dtmfClockRate: 48000 });
    // our list filters, the offerer's order wins
    const filtered = createAnswer(offer('m=audio 4000 RTP/AVP 9 8 0', ['a=rtpmap:9 G722/8000']), { ...local, codecs: ['PCMU', 'PCMA'] });
    expect(filtered.media.codec).to.equal('PCMA');
    expect(() => createAnswer(offer('m=audio 4000 RTP/AVP 9'), { ...local, codecs: ['PCMU'] })).to.throw(SdpError, /no common codec/);
    expect(() => createAnswer(offer('m=audio 4000 RTP/AVP 97', ['a=rtpmap:97 iLBC/8000']), local)).to.throw(SdpError, /no common codec/);
    // opus at another clock is not opus
    expect(() => createAnswer(offer('m=audio 4000 RTP/AVP 96', ['a=rtpmap:96 opus/16000']), local)).to.throw(SdpError, /no common codec/);
  });

  it('our offer lists the codecs in the order given, telephone-event at 8000 and 48000 as needed', () => {
    const o = createOffer({ ...local, codecs: ['G722', 'opus', 'PCMU', 'PCMA'] });
    expect(o).to.contain('m=audio 20000 RTP/AVP 9 111 0 8 101 110\r\n');
    expect(o).to.contain('a=rtpmap:111 opus/48000/2').and.contain('a=rtpmap:110 telephone-event/48000').and.contain('a=rtpmap:101 telephone-event/8000');
    expect(o).to.contain('a=fmtp:111 maxplaybackrate=16000;sprop-maxcapturerate=16000;stereo=0;useinbandfec=1');
    const opusOnly = createOffer({ ...local, codecs: ['opus'] });
    expect(opusOnly).to.contain('m=audio 20000 RTP/AVP 111 110\r\n');
    const answer = createAnswer(o, { address: '10.1.1.1', port: 30000 }).sdp;
    expect(applyAnswer(answer, local)).to.include({ codec: 'G722', payloadType: 9, dtmfPayloadType: 101 });
    const opusAnswer = createAnswer(opusOnly, { address: '10.1.1.1', port: 30000 }).sdp;
    expect(applyAnswer(opusAnswer, { ...local, codecs: ['opus'] })).to.include({ codec: 'opus', payloadType: 111, dtmfPayloadType: 110, clockRate: 48000 });
    // a callee that answers Opus with telephone-event at 8000 only: its events are taken at 8000
    const answer8k = offer('m=audio 4000 RTP/AVP 111 101', ['a=rtpmap:111 opus/48000/2', 'a=rtpmap:101 telephone-event/8000']);
    expect(applyAnswer(answer8k, { ...local, codecs: ['opus', 'PCMU'] })).to.include({ codec: 'opus', clockRate: 48000, dtmfPayloadType: 101, dtmfClockRate: 8000 });
  });
});
