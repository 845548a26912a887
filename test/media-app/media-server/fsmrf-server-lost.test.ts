// A live leg when media-app loses the switch's event socket (FsmrfCallEndpoint.serverLost,
// media-app/media-server/fsmrf/endpoint.ts) while the switch answers nothing on the leg's own channel
// socket (a hung switch: no hangup, no socket end, no BYE). fsmrf's Endpoint.destroy would wait for the
// BYE for ever; the leg's end is bounded as a destroy's is (leg-end.ts: LEG_END_MS on the backend's
// timers), on virtual time: past the bound nothing of the leg is left: no timer, no dialog in
// drachtio-srf's dialogs, no open channel socket on media-app's side. Past the event socket's connect
// limit as well (the reconnect that may run meanwhile is a phase of its own: connect.ts).
import { expect } from 'chai';
import type net from 'node:net';
import { FsmrfBackend, type FsmrfCallEndpoint } from '../../../media-app/media-server/fsmrf/backend';
import { LEG_END_MS } from '../../../media-app/media-server/fsmrf/leg-end';
import { SWITCH_CONNECT_MS } from '../../../media-app/media-server/fsmrf/connect';
import type { Endpoint } from '../../../media-engine';
import { startSwitchRig, type SwitchRig } from '../../../testkit/esl/switch-rig';
import { PASSWORD } from '../../../testkit/esl/client';
import { watchedTimers } from '../../support/virtual-timers';
import { boundedOnce } from '../../../testkit/bounded';

describe('media-app fsmrf backend: a live leg when the event socket is lost and the switch answers nothing', function () {
  this.timeout(30_000);
  let rig: SwitchRig;
  let backend: FsmrfBackend;
  let w: ReturnType<typeof watchedTimers>;
  const peers: Endpoint[] = [];
  const paused: net.Socket[] = [];

  beforeEach(async () => {
    rig = await startSwitchRig();
    w = watchedTimers();
    backend = await FsmrfBackend.connect(rig.appSrf, { host: '127.0.0.1', port: rig.port, password: PASSWORD }, { connectTimeoutMs: SWITCH_CONNECT_MS, timers: w.timers });
  });
  afterEach(async () => {
    for (const s of paused.splice(0)) s.resume();
    for (const p of peers.splice(0)) await p.destroy().catch(() => undefined);
    backend?.close();
    await rig?.close();
  });

  async function leg(): Promise<FsmrfCallEndpoint> {
    const peer = await rig.engine.createEndpoint();
    peers.push(peer);
    const l = await backend.createEndpoint({ remoteSdp: peer.local.sdp });
    await peer.modify(l.local.sdp);
    return l;
  }

  /** The switch's side of the leg's channel socket, and its inbound event-socket connections. */
  const switchSockets = (uuid: string) => {
    const all = [...rig.esl.connections] as unknown as { session: { channel: { uuid: string } } | null; socket: net.Socket }[];
    const channel = all.find((c) => c.session?.channel.uuid === uuid);
    if (!channel) throw new Error(`no channel socket for ${uuid}`);
    return { channel: channel.socket, inbound: all.filter((c) => !c.session).map((c) => c.socket) };
  };

  it('the leg ends at once; past LEG_END_MS its dialog is forgotten, its channel socket closed, no timer left', async () => {
    const l = await leg();
    const dialog = (l.fs as unknown as { dialog: { id: string } }).dialog;
    const dialogs = (rig.appSrf as unknown as { _dialogs: Map<string, unknown> })._dialogs;
    const ours = (l.fs.conn as unknown as { socket: net.Socket }).socket;
    const sockets = switchSockets(l.uuid);
    // the switch reads nothing more of the leg's socket: the hangup media-app sends is never acted on
    sockets.channel.pause();
    paused.push(sockets.channel);
    const ended = boundedOnce(l, 'destroy', 5000, "the leg's destroy event");
    const armed = boundedOnce(w.armings, 'set', 5000, "the leg end's deadline armed");
    // the event socket reset (a crashed listener): the link is down, the live leg ended
    for (const s of sockets.inbound) s.destroy();
    const [end] = (await ended) as [{ reason: string }];
    expect(end.reason).to.equal('worker-died');
    expect((await armed)[0], "the leg end's deadline").to.equal(LEG_END_MS);
    // the link's reconnect is a phase of its own: cancelled, so what is left armed is the leg's only
    backend.close();
    expect(w.clock.pending(), "the leg end's deadline only").to.equal(1);
    expect(dialogs.has(dialog.id), 'waiting for the BYE').to.equal(true);
    w.clock.advance(LEG_END_MS - 1);
    expect(dialogs.has(dialog.id), 'not before the deadline').to.equal(true);
    w.clock.advance(Math.max(1, SWITCH_CONNECT_MS - LEG_END_MS + 1));
    expect(w.clock.pending(), 'nothing left armed').to.equal(0);
    expect(dialogs.has(dialog.id), "media-app's dialog of the leg forgotten").to.equal(false);
    expect(ours.destroyed, "media-app's side of the leg's channel socket closed").to.equal(true);
  });
});
