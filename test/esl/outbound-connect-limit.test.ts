// The switch's outbound socket that never connects (esl/sip-face.ts dial): the switch gives up at its
// connect limit, OUTBOUND_CONNECT_MS by default, as long as fsmrf waits for that socket (its createEndpoint:
// 4 s, then its BYE), never later: the channel is hung up (DESTINATION_OUT_OF_ORDER, a BYE to the dialog)
// and no Listener is left. The connect hangs for real: fsmrf's listener stand-in is a child process stopped
// (SIGSTOP) with its accept queue full, so the switch's SYN and its retransmits are dropped. The switch's
// connect timer is node's socket timeout (real time): the face here has a short limit (LIMIT_MS), and the
// BYE is asserted to come no sooner than that limit after the INVITE went out, and within a few times it
// (a loaded machine may run a timer late, never early); the default and fsmrf's 4 s are compared as numbers.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { OUTBOUND_CONNECT_MS, SipFace } from '../../esl/sip-face';
import { useOutboundStall } from '../../testkit/esl/outbound-stall';
import { boundedOnce } from '../../testkit/bounded';

/** the face's connect limit in this test: a quarter of the default, so a face that ignored it would miss the wait below */
const LIMIT_MS = 1000;

/** fsmrf's waits for the outbound socket after its INVITE's 200 (createEndpoint's connTimeout), read from its source. */
function fsmrfConnectWaits(): number[] {
  const file = path.join(path.dirname(require.resolve('drachtio-fsmrf/package.json')), 'lib', 'mediaserver.js');
  return [...fs.readFileSync(file, 'utf8').matchAll(/connTimeout = setTimeout\(timeoutFn\.bind\(this, dlg, uuid\), (\d+)\)/g)].map((m) => Number(m[1]));
}

describe("esl: the outbound socket's connect limit", function () {
  this.timeout(30_000);
  const stall = useOutboundStall({ outboundConnectMs: LIMIT_MS });

  it("is as long as fsmrf waits by default: OUTBOUND_CONNECT_MS is fsmrf's 4 s, and a face made without options uses it", () => {
    const waits = fsmrfConnectWaits();
    expect(waits, "fsmrf's createEndpoint waits (lib/mediaserver.js, its connTimeout)").to.have.length.at.least(1);
    expect(new Set(waits)).to.deep.equal(new Set([OUTBOUND_CONNECT_MS]));
    expect(OUTBOUND_CONNECT_MS).to.equal(4000);
    // a face never started (its srf unused): the limit it would dial with
    expect(new SipFace(stall.rig.appSrf, stall.rig.engine, stall.rig.esl).outboundConnectMs).to.equal(OUTBOUND_CONNECT_MS);
    expect(() => new SipFace(stall.rig.appSrf, stall.rig.engine, stall.rig.esl, { outboundConnectMs: 0 })).to.throw(/outboundConnectMs: want a whole number of ms >= 1, got 0/);
  });

  it('a connect that never completes hangs the channel up at the limit, not sooner, with a BYE; no Listener left', async () => {
    const rig = stall.rig;
    const { dialog, uuid, sent } = await stall.dial();
    // within three times the limit of the INVITE (a ratio: a loaded machine's late timers and SIP hops), well before
    // the default 4 s: a face dialling with the default instead of its option would fail here
    await boundedOnce(dialog, 'destroy', Math.max(0, 3 * LIMIT_MS - (performance.now() - sent)), "the switch's BYE");
    const took = performance.now() - sent;
    // node's timers never fire early; its timer clock counts whole ms (the arming may be read up to 1 ms low)
    expect(took, 'the BYE no sooner than the connect limit after the INVITE').to.be.at.least(LIMIT_MS - 1);
    expect(rig.esl.channels.has(uuid), 'the channel ended').to.equal(false);
    expect(
      [...rig.esl.connections].some((l) => l.session?.channel.uuid === uuid),
      'no Listener of the channel',
    ).to.equal(false);
  });
});
