// A party's re-INVITE that changes codec, on both media backends (issue 55): 'embedded' (media-engine in
// media-app) and 'fsmrf' (the leg's channel on our switch, esl/, through drachtio-fsmrf). A bridged call
// of two sipp parties (A answers the platform's offer in one codec, B in PCMU), each with the RTP of a
// CodecParty sending its own tone; A then re-INVITEs offering one other codec only. The platform answers
// it in that codec (on fsmrf: the switch's answer, which renegotiates as FreeSWITCH does and changes the
// channel's read/write codec variables), and the audio flows both ways in it: A decodes B's tone from
// packets of the new payload type, and B hears A's tone while A sends in the new codec only.
// Real loopback SIP and RTP: control-api, media-app, sipp, our switch.
import { expect } from 'chai';
import { until } from '../../testkit/media-app/harness';
import { sippParty } from '../../testkit/media-app/phones';
import { ok200 } from '../../testkit/media-app/sipp-steps';
import { grows } from '../../testkit/count-waits';
import { useXferStack, type Stack } from '../xfer/support';
import { CallSession } from '../../media-app/call/session';
import { CodecParty, PAYLOAD_TYPE, type PartyCodec } from './codec-party';
import { heldParty } from './held-party';

const sdp = (port: number, codec: PartyCodec, version: number) =>
  [
    'v=0',
    `o=- 7 ${version} IN IP4 127.0.0.1`,
    's=-',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    `m=audio ${port} RTP/AVP ${PAYLOAD_TYPE[codec]}`,
    `a=rtpmap:${PAYLOAD_TYPE[codec]} ${codec}/8000`,
    'a=sendrecv',
  ].join('\n');

/** the party's in-dialog request: its From is the INVITE's To with its tag, its To the INVITE's From */
const inDialog = (method: string, body: string | null) => `<send${method === 'INVITE' ? ' retrans="500"' : ''}><![CDATA[
${method} [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: [$local_to];tag=[pid]codec[call_number]
To: [$remote_from]
[routes]
Call-ID: [call_id]
CSeq: 101 ${method}
Contact: <sip:codec@[local_ip]:[local_port]>
Max-Forwards: 70
${body ? `Content-Type: application/sdp\nContent-Length: [len]\n\n${body}` : 'Content-Length: 0\n'}
]]></send>`;

/**
 * A party answering in `first` (its audio at `port`), then, `afterMs` after the ACK, re-INVITEing with
 * an offer of `then` alone; sipp fails the call unless the 200 answers in `then`.
 */
function codecParty(port: number, first: PartyCodec, then: PartyCodec, afterMs: number): string {
  const pt = PAYLOAD_TYPE[then];
  return [
    '<?xml version="1.0" encoding="ISO-8859-1" ?>',
    '<scenario name="codec re-INVITE">',
    `<recv request="INVITE" rrs="true"><action>
  <ereg regexp="&lt;.*" search_in="hdr" header="From:" assign_to="remote_from"/>
  <ereg regexp="&lt;.*" search_in="hdr" header="To:" assign_to="local_to"/>
  <ereg regexp="m=audio [0-9]+ RTP/AVP[0-9 ]* ${PAYLOAD_TYPE[first]}[^0-9]" search_in="body" check_it="true" assign_to="offered"/>
</action></recv>`,
    `<send retrans="500"><![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:];tag=[pid]codec[call_number]
[last_Call-ID:]
[last_CSeq:]
Contact: <sip:codec@[local_ip]:[local_port]>
Content-Type: application/sdp
Content-Length: [len]

${sdp(port, first, 1)}
]]></send>`,
    '<recv request="ACK"/>',
    `<pause milliseconds="${afterMs}"/>`,
    inDialog('INVITE', sdp(port, then, 2)),
    '<recv response="100" optional="true"/>',
    `<recv response="200"><action><ereg regexp="m=audio [0-9]+ RTP/AVP ${pt}([^0-9]|$)" search_in="body" check_it="true" assign_to="answered"/><log message="answer [$answered] offer [$offered]"/></action></recv>`,
    inDialog('ACK', null),
    '<recv request="BYE" timeout="60000"/>',
    ok200,
    '</scenario>',
  ].join('\n');
}

for (const backend of ['embedded', 'fsmrf'] as const) {
  describe(`a codec re-INVITE on the ${backend} media backend`, function () {
    this.timeout(120_000);
    let s: Stack;
    const parties = useXferStack((x) => (s = x), {}, { mediaServer: backend });

    /** The call's leg toward A: its codec as the media server reports it, and on fsmrf the switch channel's codec variables. */
    async function legCodec(id: string) {
      const call = s.p.app.calls.get(id);
      if (!(call instanceof CallSession) || !call.endpoint) throw new Error(`call ${id} has no endpoint on the node`);
      const stats = await call.endpoint.getStats();
      const ch = s.p.switch?.sw.esl.channels.get(call.endpoint.uuid) as unknown as { channel: { variables: Map<string, string> } } | undefined;
      const v = (k: string) => ch?.channel.variables.get(k) ?? null;
      return { codec: stats.codec, switchVars: s.p.switch ? [v('read_codec'), v('write_codec'), v('rtp_use_codec_name')] : null };
    }

    async function reinvite(first: PartyCodec, then: PartyCodec) {
      // A sends 700 Hz and listens for B's 1300 Hz; B the other way round
      const a = await CodecParty.open({ sendHz: 700, hearHz: 1300, codec: first });
      const b = await CodecParty.open({ sendHz: 1300, hearHz: 700, codec: 'PCMU' });
      parties.push(a, b);
      const { port: pa, x: xa } = await sippParty(codecParty(a.port, first, then, 4000));
      const { port: pb, x: xb } = await sippParty(heldParty(b.port, []));
      const res = await s.api.post('/calls', {
        source: { type: 'tel', target: '+15550001111' },
        destinations: [{ type: 'sip', target: `codec@127.0.0.1:${pa}` }],
        actions: [{ type: 'connect', option: { source: { type: 'tel', target: '+15550001111' }, destinations: [{ type: 'sip', target: `other@127.0.0.1:${pb}` }] } }],
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const id = res.body.calls[0].id as string;

      // before: each hears the other's tone, A in its first codec
      await until(() => a.heard(first) > 25 && b.heardAll > 25, 20_000, `each party hears the other's tone in ${first} first`);
      expect(await legCodec(id)).to.deep.equal({ codec: first, switchVars: backend === 'fsmrf' ? [first, first, first] : null });

      // A re-INVITEs with `then` alone; from the platform's first packet in it, A sends in it too
      a.follow(then);
      await until(() => a.sending === then, 15_000, `the platform's first ${then} packet to A after its re-INVITE`);
      // the tones sent by this process: 31 in 3 s (hold-backends.test.ts: a loaded machine slows its sends)
      await Promise.all([grows(() => a.heard(then), 31, 3000, `A decodes B's tone from ${then} packets`), grows(() => b.heardAll, 31, 3000, `B hears A's tone, A sending ${then}`)]);
      expect(await legCodec(id), "the leg's codec once renegotiated").to.deep.equal({ codec: then, switchVars: backend === 'fsmrf' ? [then, then, then] : null });

      expect((await s.api.post(`/calls/${id}/hangup`, undefined)).status).to.equal(200);
      const [ra, rb] = [await xa.done, await xb.done];
      expect(ra.code, ra.errors + ra.messages.slice(-3000)).to.equal(0);
      expect(rb.code, rb.errors + rb.messages.slice(-3000)).to.equal(0);
    }

    it('PCMU → PCMA: the re-INVITE is answered in PCMA and the tones flow both ways in it', async () => {
      await reinvite('PCMU', 'PCMA');
    });

    it('PCMU → G.722: answered in G.722, the tones flow both ways in it (A decodes at 16 kHz)', async () => {
      await reinvite('PCMU', 'G722');
    });

    it('G.722 → PCMU: a wideband leg renegotiated down to PCMU, the tones flow both ways in it', async () => {
      await reinvite('G722', 'PCMU');
    });
  });
}
