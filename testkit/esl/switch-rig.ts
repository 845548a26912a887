// fsmrf against our switch, as test/esl/endpoint.test.ts sets it up: two sip-servers in process (fsmrf's
// Srf on one, the SIP face on the other, at the drachtio_mrf address `sofia status` reports), a media
// engine, the event socket, and an fsmrf MediaServer connected to it. Both libraries unmodified.
import fs from 'node:fs';
import Mrf, { type Endpoint as FsEndpoint, type MediaServer as FsMediaServer } from 'drachtio-fsmrf';
import { MediaServer, type Endpoint } from '../../media-engine';
import type { EslServer, EslServerOptions } from '../../esl/server';
import { SipFace, type SipFaceOptions } from '../../esl/sip-face';
import { portRange, tmpDir } from '../media-engine/support';
import { connectSrf, disconnectSrf, startServer as startSipServer, type Server as SipServer, type SrfApp } from '../sip-server/drachtio';
import { PASSWORD, subscribed, type RawClient, startServer } from './client';

/** The switch without its client: the event socket on a media engine, its SIP face, and fsmrf's Srf connected to its own sip-server. */
export interface SwitchRig {
  engine: MediaServer;
  esl: EslServer;
  /** the event socket's port (a raw client may subscribe to events there) */
  port: number;
  /** fsmrf's Srf (drachtio-srf) and its sip-server's SIP port, where a phone calls in */
  appSrf: SrfApp;
  appSipPort: number;
  close(): Promise<void>;
}

export interface FsmrfRig extends SwitchRig {
  ms: FsMediaServer;
}

/**
 * The switch side: two sip-servers, the engine, the event socket (`opts`: its own options, an egress
 * policy, time limits) at the drachtio_mrf address, listening on `eslHost` (a loopback address), its SIP face (`face`: its
 * options); the client connects itself (fsmrf's MediaServer here, media-app's FsmrfBackend in test/media-app/media-server).
 */
export async function startSwitchRig(opts: Partial<EslServerOptions> = {}, eslHost = '127.0.0.1', face: SipFaceOptions = {}): Promise<SwitchRig> {
  const parts: { appSip?: SipServer; faceSip?: SipServer; engine?: MediaServer; esl?: EslServer; appSrf?: SrfApp; faceSrf?: SrfApp } = {};
  const close = async () => {
    if (parts.appSrf) disconnectSrf(parts.appSrf);
    if (parts.faceSrf) disconnectSrf(parts.faceSrf);
    await parts.esl?.close();
    await parts.engine?.destroy();
    await parts.appSip?.close();
    await parts.faceSip?.close();
  };
  try {
    parts.appSip = await startSipServer();
    parts.faceSip = await startSipServer();
    parts.engine = await MediaServer.start({ rtpPorts: portRange(), workers: 1 });
    const { server: esl, port } = await startServer({ profile: { name: 'drachtio_mrf', address: `127.0.0.1:${parts.faceSip.sipPort}` }, ...opts }, eslHost);
    parts.esl = esl;
    parts.faceSrf = await connectSrf(parts.faceSip.drachtioPort);
    new SipFace(parts.faceSrf, parts.engine, esl, face).start();
    parts.appSrf = await connectSrf(parts.appSip.drachtioPort);
    return { engine: parts.engine, esl, port, appSrf: parts.appSrf, appSipPort: parts.appSip.sipPort, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** The switch rig with fsmrf's MediaServer connected to it. `opts`: the event socket's own options. */
export async function startFsmrfRig(opts: Partial<EslServerOptions> = {}): Promise<FsmrfRig> {
  const sw = await startSwitchRig(opts);
  let ms: FsMediaServer | undefined;
  const close = async () => {
    ms?.disconnect();
    await sw.close();
  };
  try {
    ms = await new Mrf(sw.appSrf).connect({ address: '127.0.0.1', port: sw.port, secret: PASSWORD, listenAddress: '127.0.0.1', listenPort: 0 });
    return { ...sw, ms, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** A channel of the switch whose far end (an engine endpoint, real RTP on loopback) sends to it: the channel answered its offer. */
export interface RigCall {
  ep: FsEndpoint;
  peer: Endpoint;
}

export interface FsmrfFixture {
  /** the rig of this describe (started in its before) */
  readonly rig: FsmrfRig;
  /** a temporary directory for the tests' files, removed after */
  readonly dir: string;
  /** A channel whose far end sends to it; both hung up after each test. */
  call(): Promise<RigCall>;
  /** An inbound client subscribed to `events` (plain); closed after each test. */
  subscriber(events: string): Promise<RawClient>;
}

/**
 * The rig for a describe: started before its tests (the event socket's options may use the directory),
 * the calls and clients of each test closed after it, the rig and the directory after them all.
 */
export function useFsmrfRig(opts: (dir: string) => Partial<EslServerOptions> = () => ({})): FsmrfFixture {
  let rig: FsmrfRig | undefined;
  let dir: string | undefined;
  const open: RigCall[] = [];
  const clients: RawClient[] = [];
  before(async () => {
    dir = tmpDir();
    rig = await startFsmrfRig(opts(dir));
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.socket.destroy();
    for (const { ep, peer } of open.splice(0)) {
      // a far end still playing a long file stops first
      await peer.stopPlayback().catch(() => undefined);
      await ep.destroy().catch(() => undefined);
      await peer.destroy().catch(() => undefined);
    }
  });
  after(async () => {
    await rig?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  const started = () => {
    if (!rig) throw new Error('the fsmrf rig is not started (use it inside a test or a hook after before)');
    return rig;
  };
  return {
    get rig() {
      return started();
    },
    get dir() {
      if (!dir) throw new Error('the fsmrf rig is not started');
      return dir;
    },
    async call() {
      const r = started();
      const peer = await r.engine.createEndpoint({});
      const ep = await r.ms.createEndpoint({ remoteSdp: peer.local.sdp });
      await peer.modify(ep.local.sdp!);
      open.push({ ep, peer });
      return { ep, peer };
    },
    async subscriber(events) {
      const c = await subscribed(started().port, PASSWORD, events);
      clients.push(c);
      return c;
    },
  };
}
