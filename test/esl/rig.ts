// fsmrf against our switch, as test/esl/endpoint.test.ts sets it up: two sip-servers in process (fsmrf's
// Srf on one, the SIP face on the other, at the drachtio_mrf address `sofia status` reports), a media
// engine, the event socket, and an fsmrf MediaServer connected to it. Both libraries unmodified.
import Mrf, { type MediaServer as FsMediaServer } from 'drachtio-fsmrf';
import { MediaServer } from '../../media-engine';
import type { EslServer, EslServerOptions } from '../../esl/server';
import { SipFace } from '../../esl/sip-face';
import { portRange } from '../../testkit/media-engine/support';
import { connectSrf, disconnectSrf, startServer as startSipServer, type Server as SipServer } from '../sip-server/drachtio/harness';
import { PASSWORD, startServer } from './support';

export interface FsmrfRig {
  engine: MediaServer;
  esl: EslServer;
  /** the event socket's port (a raw client may subscribe to events there) */
  port: number;
  ms: FsMediaServer;
  /** fsmrf's Srf (drachtio-srf, untyped as the drachtio tests drive it) and its sip-server's SIP port, where a phone calls in */
  appSrf: any;
  appSipPort: number;
  close(): Promise<void>;
}

/** `opts`: the event socket's own options (an egress policy, time limits). */
export async function startFsmrfRig(opts: Partial<EslServerOptions> = {}): Promise<FsmrfRig> {
  const parts: { appSip?: SipServer; faceSip?: SipServer; engine?: MediaServer; esl?: EslServer; appSrf?: any; faceSrf?: any; ms?: FsMediaServer } = {}; // drachtio-srf driven untyped, as the drachtio tests do
  const close = async () => {
    parts.ms?.disconnect();
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
    const { server: esl, port } = await startServer({ profile: { name: 'drachtio_mrf', address: `127.0.0.1:${parts.faceSip.sipPort}` }, ...opts });
    parts.esl = esl;
    parts.faceSrf = await connectSrf(parts.faceSip.drachtioPort);
    new SipFace(parts.faceSrf, parts.engine, esl).start();
    parts.appSrf = await connectSrf(parts.appSip.drachtioPort);
    parts.ms = await new Mrf(parts.appSrf).connect({ address: '127.0.0.1', port, secret: PASSWORD, listenAddress: '127.0.0.1', listenPort: 0 });
    return { engine: parts.engine, esl, port, ms: parts.ms, appSrf: parts.appSrf, appSipPort: parts.appSip.sipPort, close };
  } catch (e) {
    await close();
    throw e;
  }
}
