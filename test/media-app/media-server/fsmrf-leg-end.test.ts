// The end of a leg media-app asks for on the fsmrf backend (media-app/media-server/fsmrf/leg-end.ts)
// against our switch (testkit/esl/switch-rig.ts: real SIP, event socket, RTP on loopback). drachtio-fsmrf's
// destroy waits for the switch's BYE to reach media-app's dialog: with media-app's sip-server connection
// gone it never does. The leg's destroy, and a room's (its control leg), settle at the channel socket's
// end or the hangup event; a switch that answers nothing is waited for up to the deadline (virtual
// time), media-app's dialog of the leg forgotten then; the deadline's timer never outlives the end.
import { expect } from 'chai';
import type net from 'node:net';
import { disconnectSrf } from '../../sip-server/drachtio/harness';
import { FsmrfBackend, type FsmrfCallEndpoint } from '../../../media-app/media-server/fsmrf/backend';
import { endLeg, LEG_END_MS, type LegEndBy } from '../../../media-app/media-server/fsmrf/leg-end';
import type { Endpoint } from '../../../media-engine';
import { startSwitchRig, type SwitchRig } from '../../../testkit/esl/switch-rig';
import { callThrough, connectBackend } from '../../../testkit/esl/fsmrf-suite';
import { watchedTimers } from '../../support/virtual-timers';
import { bounded, boundedOnce } from '../../../testkit/bounded';
import { until } from '../../../testkit/media-app/harness';

describe("media-app fsmrf backend: a leg's end when the switch's BYE cannot come", function () {
  this.timeout(30_000);
  let rig: SwitchRig;
  let backend: FsmrfBackend;
  let w: ReturnType<typeof watchedTimers>;
  const peers: Endpoint[] = [];

  beforeEach(async () => {
    rig = await startSwitchRig();
    w = watchedTimers();
    backend = await connectBackend(rig, { timers: w.timers });
  });
  afterEach(async () => {
    for (const p of peers.splice(0)) await p.destroy().catch(() => undefined);
    backend?.close();
    await rig?.close();
  });

  /** A leg answered by the switch, a far end (an engine endpoint) on its other side. */
  async function leg(): Promise<FsmrfCallEndpoint> {
    const { leg: l, peer } = await callThrough(rig, backend);
    peers.push(peer);
    return l;
  }

  /** The switch's side of the leg's channel socket. */
  const switchSocket = (uuid: string) => {
    const l = [...rig.esl.connections].find((c) => c.session?.channel.uuid === uuid);
    if (!l) throw new Error(`no channel socket for ${uuid}`);
    return (l as unknown as { socket: net.Socket }).socket;
  };

  it("media-app's sip-server connection gone: the leg's destroy settles, the channel is hung up on the switch", async () => {
    const l = await leg();
    expect(rig.esl.channels.has(l.uuid)).to.equal(true);
    disconnectSrf(rig.appSrf);
    await bounded(l.destroy(), 3000, "the leg's destroy without the switch's BYE");
    expect(l.destroyed).to.equal(true);
    expect(rig.esl.channels.has(l.uuid), 'the channel hung up').to.equal(false);
  });

  it('the same end on virtual timers: settled by the socket or the hangup event with no time moved; the dialog no BYE frees is forgotten at the deadline', async () => {
    const l = await leg();
    const dialog = (l.fs as unknown as { dialog: { id: string; connected: boolean } }).dialog;
    const dialogs = (rig.appSrf as unknown as { _dialogs: Map<string, unknown> })._dialogs;
    disconnectSrf(rig.appSrf);
    const armed = boundedOnce(w.armings, 'set', 2000, "the end's deadline armed");
    const by = await bounded(endLeg(l.fs, w.timers), 3000, 'the end');
    expect((await armed)[0]).to.equal(LEG_END_MS);
    expect(['socket', 'hangup-complete']).to.include(by);
    // the switch's BYE goes nowhere (sip-server gone): the dialog's deadline is still armed, then forgets it
    expect(w.clock.pending(), "the dialog's deadline").to.equal(1);
    expect(dialogs.has(dialog.id)).to.equal(true);
    w.clock.advance(LEG_END_MS);
    expect(w.clock.pending(), 'nothing left armed').to.equal(0);
    expect(dialogs.has(dialog.id), "media-app's dialog of the leg forgotten").to.equal(false);
  });

  it('a BYE from the switch clears the deadline: nothing armed once the dialog ended', async () => {
    const l = await leg();
    const armed = boundedOnce(w.armings, 'set', 2000, "the end's deadline armed");
    const by = await bounded(endLeg(l.fs, w.timers), 3000, 'the end');
    await armed;
    expect(['socket', 'hangup-complete', 'bye']).to.include(by);
    await until(() => w.clock.pending() === 0, 3000, 'the deadline cleared by the BYE');
  });

  it('a switch that answers nothing: the end waits until the deadline, then forgets the dialog; nothing armed after', async () => {
    const l = await leg();
    const dialog = (l.fs as unknown as { dialog: { id: string; connected: boolean } }).dialog;
    const dialogs = (rig.appSrf as unknown as { _dialogs: Map<string, unknown> })._dialogs;
    expect(dialogs.has(dialog.id)).to.equal(true);
    // the switch reads nothing more of the leg's socket: no hangup, no event, no end, no BYE
    const sock = switchSocket(l.uuid);
    sock.pause();
    let by: LegEndBy | null = null;
    const armed = boundedOnce(w.armings, 'set', 2000, "the end's deadline armed");
    const ended = endLeg(l.fs, w.timers).then((b) => (by = b));
    await armed;
    w.clock.advance(LEG_END_MS - 1);
    await new Promise((r) => setImmediate(r));
    expect(by, 'not before the deadline').to.equal(null);
    w.clock.advance(1);
    expect(await bounded(ended, 1000, 'the end at its deadline')).to.equal('deadline');
    expect(w.clock.pending()).to.equal(0);
    expect(dialog.connected).to.equal(false);
    expect(dialogs.has(dialog.id), "media-app's dialog of the leg forgotten").to.equal(false);
    // the switch reads again: the hangup it was sent ends the channel (no timer of the end fires later)
    sock.resume();
    while (rig.esl.channels.has(l.uuid) || [...rig.esl.connections].some((c) => c.session?.channel.uuid === l.uuid))
      await boundedOnce(rig.esl, 'disconnected', 5000, 'the channel ended by the switch');
    expect(w.clock.pending()).to.equal(0);
  });

  it("a room's destroy (its control leg) settles too, on the backend's timers, none left", async () => {
    const mix = await backend.createMix(`legend${Date.now()}`);
    const control = mix.controlLegUuid;
    disconnectSrf(rig.appSrf);
    await bounded(mix.destroy(), 3000, "the room's destroy without the switch's BYE");
    expect(mix.destroyed).to.equal(true);
    expect(rig.esl.channels.has(control), 'the control leg hung up').to.equal(false);
    // no BYE will free the control leg's dialog: its deadline forgets it, then nothing is left
    w.clock.advance(LEG_END_MS);
    expect(w.clock.pending()).to.equal(0);
  });
});
