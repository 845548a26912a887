// REFER with Replaces across a held call (issue 33): X (a party the platform calls, its flow connects
// it to line 1 of phone B) is bridged to B; B puts X on hold by re-INVITE (a=sendonly), calls extension
// Y on its line 2 (the consultation), then REFERs line 1 to Y with Replaces naming line 2. X and Y must
// then talk (RTP both ways: each is a TonePeer that speaks and counts the tone it hears) and no leg of
// B may be left up; X's hangup then ends Y.
import { expect } from 'chai';
import type { CallRow } from '../../core/repos/calls';
import type { MediaFlags } from '../../media-app/call/media-state';
import { freePort, sippMediaPort, udpBound } from '../../testkit/ports';
import { createExtension, sipp, until } from '../../testkit/media-app/harness';
import { ack } from '../../testkit/media-app/sipp-steps';
import { party, phoneCalls, registerOnly, TonePeer, type Stack, useXferStack } from './support';
import { connectXTo } from './referrer';
import { loopbackSdp } from '../../testkit/sdp';

/** B's line 1 re-INVITEs X with a=sendonly (hold), then ACKs the 200; `rtpPort` stays its media port. */
function holdByReinvite(rtpPort: number, direction: 'sendonly' | 'inactive'): string {
  return `<pause milliseconds="300"/>
<send retrans="500"><![CDATA[
INVITE [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: [$local_to];tag=[pid]SIPpTag01[call_number]
To: [$remote_from]
[routes]
Call-ID: [call_id]
CSeq: 100 INVITE
Contact: <sip:phone@[local_ip]:[local_port]>
Max-Forwards: 70
Content-Type: application/sdp
Content-Length: [len]

${loopbackSdp(rtpPort, { version: 2, direction })}
]]></send>
<recv response="100" optional="true"/>
<recv response="200"><action><ereg regexp="a=(recvonly|inactive)" search_in="body" check_it="true" assign_to="dir"/><log message="hold answered [$dir]"/></action></recv>
${ack(100)}`;
}

describe('REFER with Replaces across a held call', function () {
  this.timeout(120_000);
  let s: Stack;
  const open = useXferStack((x) => (s = x));

  for (const direction of ['sendonly', 'inactive'] as const) {
    it(`X held by B (${direction}), B consults Y, REFER with Replaces: X and Y talk both ways, B's legs are gone`, async () => {
      const b2 = await createExtension(s.f.customer.id);
      const y = await createExtension(s.f.customer.id);
      const [toneX, toneY, sinkB] = [await TonePeer.open(), await TonePeer.open(), await TonePeer.open()];
      open.push(toneX, toneY, sinkB);
      const server = `127.0.0.1:${s.p.sipPort}`;
      const yPort = await freePort();
      const reg = await sipp(registerOnly(y.ext.username, y.domain), [server, '-i', '127.0.0.1', '-p', String(yPort), '-m', '1', '-au', y.ext.username, '-ap', y.password]).done;
      expect(reg.code, reg.errors).to.equal(0);
      const yPhone = sipp(party({ rtpPort: toneY.port, byeTimeoutMs: 60_000 }), ['-i', '127.0.0.1', '-p', String(yPort), '-m', '1', '-timeout', '60s'], { killAfterMs: 70_000 });
      const cidPrefix = `xheld${direction}${Date.now()}`;
      const replaces = `${cidPrefix}-1@127.0.0.1`;
      const referTo = `sip:${y.ext.extension}@${y.domain}?Replaces=${encodeURIComponent(`${replaces};to-tag=t;from-tag=f`)}`;
      // line 1: answers X's connect, holds X, later REFERs with Replaces
      const line1 = party({ rtpPort: sinkB.port, referTo, referAfterMs: 3500 });
      const afterAck = line1.indexOf('<recv request="ACK"/>') + '<recv request="ACK"/>'.length;
      const line1Held = `${line1.slice(0, afterAck)}\n${holdByReinvite(sinkB.port, direction)}${line1.slice(afterAck)}`;
      const [px, pb] = [await freePort(), await freePort()];
      const args = (p: number) => ['-i', '127.0.0.1', '-p', String(p), '-m', '1', '-timeout', '60s'];
      const x = sipp(party({ rtpPort: toneX.port, byeTimeoutMs: 60_000 }), args(px), { killAfterMs: 70_000 });
      const b = sipp(line1Held, args(pb), { killAfterMs: 70_000 });
      await Promise.all([udpBound(px), udpBound(pb)]); // both parties have bound their ports
      const { xCall, legRow: bRow } = await connectXTo(s, px, pb, 'b', 'line 1 up');
      // line 2: the consultation, B calls Y while X is held (B's hold answered: X hears the music)
      const flags = () => (s.p.app.calls.get(xCall.id) as unknown as { mediaState: { flags: MediaFlags } } | undefined)?.mediaState.flags;
      await until(() => flags()?.peerHeld || null, 10_000, "B's hold reached X");
      const line2 = sipp(
        phoneCalls(b2.ext.username, b2.domain, y.ext.extension, { waitForBye: true }),
        [
          server,
          '-i',
          '127.0.0.1',
          '-m',
          '1',
          '-au',
          b2.ext.username,
          '-ap',
          b2.password,
          '-cid_str',
          `${cidPrefix}-%u@%s`,
          '-timeout',
          '60s',
          '-mi',
          '127.0.0.1',
          '-mp',
          String(await sippMediaPort()),
        ],
        { killAfterMs: 70_000 },
      );
      const [rb, rb2] = await Promise.all([b.done, line2.done]);
      expect(rb.code, 'line 1 ' + rb.errors + rb.messages.slice(-3000)).to.equal(0);
      expect(rb2.code, 'line 2 ' + rb2.errors + rb2.messages.slice(-3000)).to.equal(0);
      const t = await until(
        async () => {
          const r = await s.t.ctx.db('transfers').where({ transferer_call_id: bRow.id }).first();
          return r && (r.status === 'done' || r.status === 'failed') ? r : null;
        },
        10_000,
        'transfer settled',
      );
      expect(t.status).to.equal('done');
      // RTP both ways: X hears Y's tone and Y hears X's
      const [xHeard, yHeard] = [toneX.voiced, toneY.voiced];
      await until(() => toneX.voiced - xHeard > 25 && toneY.voiced - yHeard > 25, 10_000, `X and Y hear each other (X ${toneX.voiced - xHeard}, Y ${toneY.voiced - yHeard})`);
      // no leg of B is left up: only X and Y
      const live = (await s.t.ctx.db('calls').where({ customer_id: s.f.customer.id }).whereNot({ status: 'hangup' }).select('id', 'destination')) as Pick<CallRow, 'id' | 'destination'>[];
      expect(live.map((c) => c.id)).to.include(xCall.id);
      expect(live.map((c) => c.id)).to.not.include(bRow.id);
      expect(live, JSON.stringify(live)).to.have.length(2);
      const yCall = live.find((c) => c.id !== xCall.id)!;
      expect(yCall.destination.target).to.equal(y.ext.extension);
      expect((await s.api.post(`/calls/${xCall.id}/hangup`, undefined)).status).to.equal(200);
      const [rx, ry] = await Promise.all([x.done, yPhone.done]);
      expect(rx.code, rx.errors).to.equal(0);
      expect(ry.code, ry.errors).to.equal(0);
      await until(
        async () => {
          const n = await s.t.ctx.db('calls').where({ customer_id: s.f.customer.id }).whereNot({ status: 'hangup' }).count<{ count: string }[]>('id as count');
          return Number(n[0]!.count) === 0;
        },
        10_000,
        'every call of the customer ended',
      );
    });
  }
});
