// uuid_send_dtmf (mod_commands) on our switch, through fsmrf's public api(): the channel's far end (an
// engine endpoint, real RTP on loopback) receives the digits as RFC 2833 telephone-events with the
// length asked; FreeSWITCH's answers to a missing argument and an unknown uuid.
import { expect } from 'chai';
import type { DtmfEvent } from '../../media-engine';
import { ArrivalWaits } from '../../testkit/arrival-waits';
import { useFsmrfRig } from '../../testkit/esl/switch-rig';

/** An api reply's body (drachtio-modesl's event). */
const body = (r: unknown) => String((r as { getBody(): string }).getBody());

describe('esl: uuid_send_dtmf through fsmrf on the media engine', function () {
  this.timeout(20_000);
  const fx = useFsmrfRig();

  it('sends the digits to the far end as RFC 2833, each as long as `@<ms>` says', async () => {
    const { ep, peer } = await fx.call();
    const got: DtmfEvent[] = [];
    const waits = new ArrivalWaits();
    peer.on('dtmf', (e) => {
      got.push(e);
      waits.check();
    });
    const digits = (n: number) => waits.until(() => got.length >= n, 10_000, `${n} digits at the far end`);
    expect(body(await ep.api('uuid_send_dtmf', `${ep.uuid} 1#@160`))).to.equal('+OK Success\n');
    await digits(2);
    // a late duplicate of '#' (its end packet is sent three times) would come before a digit sent after
    // it: one more, then exactly the three sent
    expect(body(await ep.api('uuid_send_dtmf', `${ep.uuid} 5@160`))).to.equal('+OK Success\n');
    await digits(3);
    expect(got.map((e) => e.dtmf)).to.deep.equal(['1', '#', '5']);
    for (const e of got) {
      expect(e.source).to.equal('rfc2833');
      expect(e.duration).to.be.within(140, 200);
    }
  });

  it("answers FreeSWITCH's usage and unknown-session errors", async () => {
    const { ep } = await fx.call();
    expect(body(await ep.api('uuid_send_dtmf', ep.uuid))).to.equal('-USAGE: <uuid> <dtmf_data>\n');
    expect(body(await ep.api('uuid_send_dtmf', '00000000-0000-4000-8000-000000000000 1'))).to.equal('-ERR Cannot locate session!\n');
  });
});
