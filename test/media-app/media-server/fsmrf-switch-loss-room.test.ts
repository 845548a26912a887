// A room up when media-app loses the switch's event socket (media-app/media-server/fsmrf/conference.ts,
// FsmrfMix.serverLost): the room ends at once and its control leg is hung up if it still can be, that end
// bounded as any leg's (leg-end.ts: the channel socket's end, the hangup event, or a deadline on the
// backend's timers). Against our switch (testkit/esl/switch-rig.ts, real on loopback): the event socket is reset
// while the switch reads nothing more of the control leg's socket and no BYE can reach media-app (its
// sip-server connection gone): the end waits until the deadline (virtual time), not before, then forgets
// media-app's dialog of the control leg; nothing of the end is left armed.
import { expect } from 'chai';
import { once } from 'node:events';
import type net from 'node:net';
import { disconnectSrf } from '../../sip-server/drachtio/harness';
import { FsmrfBackend } from '../../../media-app/media-server/fsmrf/backend';
import { LEG_END_MS } from '../../../media-app/media-server/fsmrf/leg-end';
import { startSwitchRig, type SwitchRig } from '../../../testkit/esl/switch-rig';
import { PASSWORD } from '../../../testkit/esl/client';
import { watchedTimers } from '../../support/virtual-timers';
import { bounded } from '../../../testkit/bounded';

/** The reconnect's delay: far past the end's deadline, so moving time to that deadline does not reconnect. */
const RETRY_MS = 600_000;

describe("media-app fsmrf backend: a room's control leg when the switch is lost", function () {
  this.timeout(30_000);
  let rig: SwitchRig;
  let backend: FsmrfBackend;
  let w: ReturnType<typeof watchedTimers>;

  beforeEach(async () => {
    rig = await startSwitchRig();
    w = watchedTimers();
    backend = await FsmrfBackend.connect(
      rig.appSrf,
      { host: '127.0.0.1', port: rig.port, password: PASSWORD },
      { connectTimeoutMs: 5000, timers: w.timers, reconnect: { minMs: RETRY_MS, maxMs: RETRY_MS } },
    );
  });
  afterEach(async () => {
    backend?.close();
    await rig?.close();
  });

  /** The switch's side of a connection: the channel socket of `uuid`, or (null) the event socket media-app opened. */
  const switchSocket = (uuid: string | null) => {
    const l = [...rig.esl.connections].find((c) => (uuid === null ? !c.session : c.session?.channel.uuid === uuid));
    if (!l) throw new Error(`no connection for ${uuid ?? 'the event socket'}`);
    return (l as unknown as { socket: net.Socket }).socket;
  };

  it("the event socket reset, no answer on the control leg's socket, no BYE: its end forgets the dialog at the deadline, not before", async () => {
    const mix = await backend.createMix(`lossroom${process.pid}`);
    const control = mix.controlLegUuid;
    const fs = (mix as unknown as { conf: { endpoint: { dialog: { id: string; connected: boolean } } } }).conf.endpoint;
    const dialog = fs.dialog;
    const dialogs = (rig.appSrf as unknown as { _dialogs: Map<string, unknown> })._dialogs;
    expect(dialogs.has(dialog.id)).to.equal(true);
    disconnectSrf(rig.appSrf);
    const sock = switchSocket(control);
    sock.pause();
    const delays: number[] = [];
    w.armings.on('set', (ms: number) => delays.push(ms));
    const ended = once(mix, 'destroy');
    const down = once(backend.link, 'down');
    switchSocket(null).destroy();
    await bounded(down, 5000, 'the switch lost');
    expect((await bounded(ended, 1000, 'the room ended'))[0]).to.deep.equal({ reason: 'worker-died' });
    await new Promise((r) => setImmediate(r));
    expect(delays, "the control leg's end bounded on the backend's timers").to.include(LEG_END_MS);
    w.clock.advance(LEG_END_MS - 1);
    await new Promise((r) => setImmediate(r));
    expect(dialogs.has(dialog.id), 'not before the deadline').to.equal(true);
    w.clock.advance(1);
    await new Promise((r) => setImmediate(r));
    expect(dialog.connected).to.equal(false);
    expect(dialogs.has(dialog.id), "media-app's dialog of the control leg forgotten").to.equal(false);
    expect(w.clock.pending(), "only the reconnect's timer left").to.equal(1);
    sock.resume();
  });
});
