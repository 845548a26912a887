// A switch room (media-app/media-server/fsmrf/conference.ts) the switch changes by itself, against our
// switch (testkit/esl/switch-rig.ts: real SIP, event socket, RTP on loopback) and an inbound event-socket client of
// its own (as another FreeSWITCH client would be): a member kicked from elsewhere is told (memberLeft,
// its endpoint's uuid); a join that completes after the room ended (the switch made a new room of that
// name for the member alone) takes the member out again and rejects.
import { expect } from 'chai';
import type net from 'node:net';
import { FsmrfBackend, type FsmrfCallEndpoint } from '../../../media-app/media-server/fsmrf/backend';
import type { Endpoint } from '../../../media-engine';
import { startSwitchRig, type SwitchRig } from '../../../testkit/esl/switch-rig';
import { PASSWORD, RawClient } from '../../../testkit/esl/client';
import { callThrough, connectBackend } from '../../../testkit/esl/fsmrf-suite';
import { bounded, boundedOnce } from '../../../testkit/bounded';

describe('media-app fsmrf backend: a room the switch changes by itself', function () {
  this.timeout(30_000);
  let rig: SwitchRig;
  let backend: FsmrfBackend;
  let client: RawClient;
  const peers: Endpoint[] = [];
  const legs: FsmrfCallEndpoint[] = [];

  before(async () => {
    rig = await startSwitchRig();
    backend = await connectBackend(rig);
    client = await RawClient.authed(rig.port, PASSWORD);
  });
  afterEach(async () => {
    for (const l of legs.splice(0)) await l.destroy().catch(() => undefined);
    for (const p of peers.splice(0)) await p.destroy().catch(() => undefined);
  });
  after(async () => {
    client?.send('exit\n\n');
    backend?.close();
    await rig?.close();
  });

  async function leg(): Promise<FsmrfCallEndpoint> {
    const { leg: l, peer } = await callThrough(rig, backend);
    peers.push(peer);
    legs.push(l);
    return l;
  }

  const api = async (cmd: string) => (await client.command(`api ${cmd}`)).body;

  it('a member kicked by another event-socket client: memberLeft with its uuid; the mix sends no leave for it', async () => {
    const mix = await backend.createMix(`kicked${Date.now()}`);
    const l = await leg();
    await mix.join(l);
    const left = boundedOnce(mix, 'memberLeft', 5000, 'memberLeft');
    const memberId = (l.fs as unknown as { conf: { memberId: number } }).conf.memberId;
    expect(await api(`conference ${mix.name} kick ${memberId}`)).to.match(/^\+OK kicked/);
    expect((await left)[0]).to.deep.equal({ memberId: l.uuid, hungUp: false });
    // left already: no kick goes to the switch (it would answer for another member of that id)
    await mix.leave(l);
    expect(mix.destroyed).to.equal(false);
    await mix.destroy();
  });

  it('the room ended while a member entered: the member is taken out of the new room of that name, the join rejects', async () => {
    const mix = await backend.createMix(`dead${Date.now()}`);
    const l = await leg();
    // the switch reads the member's socket only once the room has ended: its `conference` comes after
    const sock = [...rig.esl.connections].find((c) => c.session?.channel.uuid === l.uuid);
    const raw = (sock as unknown as { socket: net.Socket }).socket;
    raw.pause();
    const joined = mix.join(l).then(
      () => null,
      (e: Error) => e,
    );
    const gone = boundedOnce(mix, 'destroy', 5000, "the mix's destroy");
    expect(await api(`uuid_kill ${mix.controlLegUuid}`)).to.match(/^\+OK/);
    expect((await gone)[0]).to.deep.equal({ reason: 'worker-died' });
    raw.resume();
    const err = await bounded(joined, 10_000, 'the join');
    expect(err?.message).to.equal(`conference ${mix.name} has ended`);
    const list = await api(`conference ${mix.name} list`);
    expect(list, 'the member in no room of that name').to.not.contain(l.uuid);
    expect(l.destroyed, "the member's call goes on").to.equal(false);
  });
});
