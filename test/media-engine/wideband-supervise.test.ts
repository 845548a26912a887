// Supervision of a wideband call (issue #34; docs/pbx.md "Supervisor"): the agent's and the customer's
// G.722 legs and a G.722 supervisor meet in a conference mix, as media-app/pbx/supervise.ts sets it up.
// Every listener keeps the 6 kHz tone a party sends (the mix is 16 kHz), and in whisper mode the
// customer hears nothing of the supervisor: at least 60 dB below what the agent hears of it.
import { expect } from 'chai';
import type { Endpoint, MediaServer } from '../../media-engine';
import { goertzelCoeff, goertzelPower } from '../../media-engine/dsp/goertzel';
import { useMediaServer } from '../../testkit/media-engine/support';
import { power, ToneFarEnd, toneShare, useFarEndLegs } from '../../testkit/media-engine/far-end';

/** Power of `x` at `hz` (16 kHz audio), per sample. */
function tonePower(x: Int16Array, hz: number): number {
  return (2 * goertzelPower(x, 0, x.length, goertzelCoeff(hz, 16000))) / (x.length * x.length);
}

describe('media-engine supervision of a G.722 call', function () {
  this.timeout(60000);
  let ms: MediaServer;
  useMediaServer({ ports: 100, workers: 1 }, (f) => ({ ms } = f));

  const farEndLeg = useFarEndLegs(() => ms);

  async function party(): Promise<{ far: ToneFarEnd; leg: Endpoint }> {
    const m = await farEndLeg('G722');
    expect(m.leg.local.sdp).to.contain('G722/8000');
    return m;
  }

  it('listen, whisper and barge keep the 6 kHz tone for each listener; the customer never hears a whisper', async () => {
    const agent = await party();
    const customer = await party();
    const sup = await party();
    await agent.leg.bridge(customer.leg);
    // supervise.ts: the bridge paused, the three legs in one small mix
    await agent.leg.unbridge();
    const room = await ms.createConference('supervise-hd');
    for (const p of [agent, customer, sup]) await p.leg.joinConference(room);

    // listen: the supervisor hears both sides at 16 kHz; the customer's 6 kHz tone reaches agent and supervisor
    await room.mute(sup.leg, 'in');
    await Promise.all([customer.far.sendTones(2, [[6000, 8000]]), agent.far.sendTones(2, [[5000, 8000]]), sup.far.sendTones(2, [[7000, 8000]])]);
    expect(toneShare(agent.far.lastHeard(1), 6000, 16000), "the agent hears the customer's 6 kHz").to.be.greaterThan(0.5);
    expect(toneShare(customer.far.lastHeard(1), 5000, 16000), "the customer hears the agent's 5 kHz").to.be.greaterThan(0.5);
    const supHeard = sup.far.lastHeard(1);
    expect(toneShare(supHeard, 6000, 16000), 'the supervisor hears the customer at 16 kHz').to.be.greaterThan(0.2);
    expect(toneShare(supHeard, 5000, 16000), 'and the agent').to.be.greaterThan(0.2);
    expect(toneShare(agent.far.lastHeard(1), 7000, 16000), 'listen: nobody hears the supervisor').to.be.lessThan(0.001);

    // whisper: the agent hears the supervisor's 7 kHz tone, the customer not at all
    await room.unmute(sup.leg, 'in');
    await room.whisper(sup.leg, agent.leg);
    agent.far.clear();
    customer.far.clear();
    await Promise.all([sup.far.sendTones(2, [[7000, 8000]]), customer.far.sendTones(2, [[6000, 8000]])]);
    const agentHeard = agent.far.lastHeard(1);
    const customerHeard = customer.far.lastHeard(1);
    expect(toneShare(agentHeard, 7000, 16000), "whisper: the agent hears the supervisor's 7 kHz").to.be.greaterThan(0.2);
    expect(toneShare(agentHeard, 6000, 16000), "and the customer's 6 kHz").to.be.greaterThan(0.2);
    const leak = tonePower(customerHeard, 7000);
    const heard = tonePower(agentHeard, 7000);
    expect(10 * Math.log10(heard / Math.max(leak, 1e-12)), 'the customer hears the whisper ≥ 60 dB down').to.be.greaterThan(60);
    expect(power(customerHeard), 'the customer hears silence from the agent side').to.be.lessThan(1e4);

    // barge: the customer hears the supervisor at 16 kHz too
    await room.whisper(sup.leg, null);
    customer.far.clear();
    await sup.far.sendTones(2, [[7000, 8000]]);
    expect(toneShare(customer.far.lastHeard(1), 7000, 16000), "barge: the customer hears the supervisor's 7 kHz").to.be.greaterThan(0.5);
    await room.destroy();
  });
});
