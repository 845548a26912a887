// A suite of media-app's fsmrf backend against our event socket (switch-rig.ts: the switch, its SIP
// face and an fsmrf-capable Srf, all real on loopback): the backend connected before the suite, a far
// end (an engine endpoint) called through it per `call()`, every leg ended after each test, all closed
// after the suite.
import fs from 'node:fs';
import type { AudioCodecName, Endpoint } from '../../media-engine';
import type { EslServerOptions } from '../../esl/server';
import { FsmrfBackend, type FsmrfCallEndpoint, type FsmrfConnectOptions } from '../../media-app/media-server/fsmrf/backend';
import { tmpDir } from '../media-engine/support';
import { startFsmrfRig, type FsmrfRig, type SwitchRig } from './switch-rig';
import { PASSWORD } from './client';

export interface FsmrfSuite {
  rig: FsmrfRig;
  backend: FsmrfBackend;
  /** a directory of the suite's own, removed after it */
  dir: string;
  /** a far end called through the backend (offering `codecs`, the engine's own when none): the leg answers its offer, it takes the leg's answer */
  call(opts?: { codecs?: AudioCodecName[] }): Promise<{ leg: FsmrfCallEndpoint; peer: Endpoint }>;
}

/** media-app's fsmrf backend connected to the switch of `rig` (`connect` over a 5 s connect limit). */
export function connectBackend(rig: SwitchRig, connect: Partial<FsmrfConnectOptions> = {}): Promise<FsmrfBackend> {
  return FsmrfBackend.connect(rig.appSrf, { host: '127.0.0.1', port: rig.port, password: PASSWORD }, { connectTimeoutMs: 5000, ...connect });
}

/** A far end (an engine endpoint offering `codecs`, the engine's own when none) called through `backend`: the leg answers its offer, it takes the leg's answer. Ending both is the caller's. */
export async function callThrough(rig: SwitchRig, backend: FsmrfBackend, codecs?: AudioCodecName[]): Promise<{ leg: FsmrfCallEndpoint; peer: Endpoint }> {
  const peer = await rig.engine.createEndpoint(codecs ? { codecs } : {});
  const leg = await backend.createEndpoint({ remoteSdp: peer.local.sdp });
  await peer.modify(leg.local.sdp);
  return { leg, peer };
}

export function useFsmrfSuite(opts: { rig?: Partial<EslServerOptions>; connect?: Partial<FsmrfConnectOptions>; ready?: (backend: FsmrfBackend) => void } = {}): FsmrfSuite {
  const open: { leg: FsmrfCallEndpoint; peer: Endpoint }[] = [];
  const s: FsmrfSuite = {
    rig: null as unknown as FsmrfRig,
    backend: null as unknown as FsmrfBackend,
    dir: '',
    async call(o = {}) {
      const c = await callThrough(s.rig, s.backend, o.codecs);
      open.push(c);
      return c;
    },
  };
  before(async () => {
    s.rig = await startFsmrfRig(opts.rig);
    s.backend = await connectBackend(s.rig, opts.connect);
    opts.ready?.(s.backend);
    s.dir = tmpDir();
  });
  afterEach(async () => {
    for (const { leg, peer } of open.splice(0)) {
      await peer.stopPlayback().catch(() => undefined);
      await leg.destroy().catch(() => undefined);
      await peer.destroy().catch(() => undefined);
    }
  });
  after(async () => {
    s.backend?.close();
    await s.rig?.close();
    if (s.dir) fs.rmSync(s.dir, { recursive: true, force: true });
  });
  return s;
}
