// fsmrf's createEndpoint against our switch: its INVITE goes through one sip-server to the drachtio_mrf
// profile's SIP address (a second sip-server, where the SIP face is the drachtio application), the face
// answers with an engine endpoint's SDP and dials fsmrf's outbound socket, fsmrf's Endpoint reads the
// channel from CHANNEL_DATA; destroy executes `hangup` and the face sends BYE. Both libraries unmodified.
import { expect } from 'chai';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import Mrf, { type MediaServer as FsMediaServer } from 'drachtio-fsmrf';
import { MediaServer } from '../../media-engine';
import type { EslServer } from '../../esl/server';
import { SipFace } from '../../esl/sip-face';
import { portRange, readWav, tmpDir } from '../../testkit/media-engine/support';
import { toneShare } from '../../testkit/media-engine/far-end';
import { freePort } from '../../testkit/ports';
import { connectSrf, disconnectSrf, startServer as startSipServer, type Server as SipServer } from '../sip-server/drachtio/harness';
import { PASSWORD, plainHeaders, RawClient, startServer } from '../../testkit/esl/client';

/** A caller's offer whose RTP port is a free port of this shard (nobody else's engine gets our packets). */
const farSdp = (port: number) =>
  ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${port} RTP/AVP 0 101`, 'a=rtpmap:0 PCMU/8000', 'a=rtpmap:101 telephone-event/8000', 'a=sendrecv', ''].join(
    '\r\n',
  );

describe('esl: fsmrf createEndpoint and destroy on the media engine', () => {
  let appSip: SipServer;
  let faceSip: SipServer;
  let engine: MediaServer;
  let esl: EslServer;
  let appSrf: any; // drachtio-srf driven untyped, as the drachtio tests do
  let faceSrf: any;
  let ms: FsMediaServer;

  before(async () => {
    appSip = await startSipServer();
    faceSip = await startSipServer();
    engine = await MediaServer.start({ rtpPorts: portRange(), workers: 1 });
    let port: number;
    ({ server: esl, port } = await startServer({ profile: { name: 'drachtio_mrf', address: `127.0.0.1:${faceSip.sipPort}` } }));
    faceSrf = await connectSrf(faceSip.drachtioPort);
    new SipFace(faceSrf, engine, esl).start();
    appSrf = await connectSrf(appSip.drachtioPort);
    ms = await new Mrf(appSrf).connect({ address: '127.0.0.1', port, secret: PASSWORD, listenAddress: '127.0.0.1', listenPort: 0 });
  });

  after(async () => {
    ms?.disconnect();
    if (appSrf) disconnectSrf(appSrf);
    if (faceSrf) disconnectSrf(faceSrf);
    await esl?.close();
    await engine?.destroy();
    await appSip?.close();
    await faceSip?.close();
  });

  it('3pcc: the Endpoint is the channel (uuid, the engine endpoint SDP and media port); destroy hangs it up with a BYE', async () => {
    const ep = await ms.createEndpoint();
    expect(esl.channels.has(ep.uuid)).to.equal(true);
    const call = esl.channels.get(ep.uuid)!;
    expect(ep.local.sdp).to.equal(call.channel.endpoint.local.sdp);
    expect(Number(ep.local.mediaPort)).to.equal(call.channel.endpoint.local.port);
    expect(ep.local.mediaIp).to.equal(call.channel.endpoint.local.address);
    expect(esl.sessions.count).to.equal(1);
    const hungUp = once(esl, 'disconnected');
    // the engine endpoint is released by the hang-up, after a round trip to its worker: not necessarily
    // before the outbound socket closes
    const released = once(call.channel.endpoint, 'destroy');
    await ep.destroy();
    await hungUp;
    expect(esl.sessions.count).to.equal(0);
    expect(esl.channels.size).to.equal(0);
    await released;
    expect(call.channel.endpoint.destroyed).to.equal(true);
  });

  it("3pcc then modify (re-INVITE with the far end's SDP): the channel's endpoint sends to that far end", async () => {
    const ep = await ms.createEndpoint();
    const peer = await engine.createEndpoint({ remoteSdp: ep.local.sdp! });
    const dir = tmpDir();
    try {
      await ep.modify(peer.local.sdp);
      expect(ep.remote.sdp).to.equal(peer.local.sdp);
      const heard = path.join(dir, 'heard.wav');
      const rec = await peer.startRecord(heard);
      await ep.play('tone_stream://%(1000,0,440)');
      await peer.stopRecord(heard);
      await rec.done;
      expect(toneShare(readWav(heard).samples, 440, 8000), 'the far end hears what the channel plays').to.be.above(0.5);
    } finally {
      await ep.destroy();
      await peer.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a re-INVITE whose offer the engine refuses: 488, and the channel keeps its media; one without SDP: 200 with the current SDP', async () => {
    const ep = await ms.createEndpoint();
    const peer = await engine.createEndpoint({ remoteSdp: ep.local.sdp! });
    const dir = tmpDir();
    try {
      await ep.modify(peer.local.sdp);
      // fsmrf has no call for it: the dialog's own re-INVITE, without a body (before the refused one:
      // drachtio-srf's Dialog never admits another re-INVITE after a non-200 answer)
      const dialog = (ep as unknown as { dialog: { modify(opts: object): Promise<string> } }).dialog;
      expect(await dialog.modify({}), 'the 200 carries the current SDP').to.equal(esl.channels.get(ep.uuid)!.channel.endpoint.local.sdp);
      const refused = await ep.modify('v=0\r\nthis is no offer\r\n').then(
        () => null,
        (e: { status?: number }) => e,
      );
      expect(refused?.status, 'the refused offer').to.equal(488);
      const heard = path.join(dir, 'heard.wav');
      const rec = await peer.startRecord(heard);
      await ep.play('tone_stream://%(1000,0,440)');
      await peer.stopRecord(heard);
      await rec.done;
      expect(toneShare(readWav(heard).samples, 440, 8000), 'the media as before the refused offer').to.be.above(0.5);
    } finally {
      await ep.destroy();
      await peer.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("with the caller's SDP: the remote media and DTMF type fsmrf reads come from the engine's answer", async () => {
    const port = await freePort();
    const sdp = farSdp(port);
    const ep = await ms.createEndpoint({ remoteSdp: sdp });
    expect(ep.remote.sdp).to.equal(sdp);
    expect(ep.remote.mediaIp).to.equal('127.0.0.1');
    expect(ep.remote.mediaPort).to.equal(String(port));
    expect(ep.dtmfType).to.equal('rfc2833');
    await ep.destroy();
    expect(esl.sessions.count).to.equal(0);
  });

  it('execute set: CHANNEL_EXECUTE_COMPLETE answers the same Application-UUID and carries the new variable', async () => {
    const ep = await ms.createEndpoint();
    const evt = (await ep.execute('set', 'playback_delimiter=!')) as { getHeader(n: string): string | null };
    expect(evt.getHeader('Event-Name')).to.equal('CHANNEL_EXECUTE_COMPLETE');
    expect(evt.getHeader('Application')).to.equal('set');
    expect(evt.getHeader('Unique-ID')).to.equal(ep.uuid);
    expect(evt.getHeader('variable_playback_delimiter')).to.equal('!');
    expect(esl.channels.get(ep.uuid)!.channel.variables.get('playback_delimiter')).to.equal('!');
    await ep.destroy();
  });

  it('the outbound socket by hand: connect, myevents, linger; sendmsg hangup sends BYE, the events, the linger notice, and the socket stays until exit', async () => {
    const outPort = await freePort();
    const listener = net.createServer();
    listener.on('error', () => undefined);
    await new Promise<void>((resolve) => listener.listen(outPort, '127.0.0.1', resolve));
    const accepted = once(listener, 'connection') as Promise<[net.Socket]>;
    const rtpPort = await freePort();
    try {
      const bye = new Promise<void>((resolve) => {
        void appSrf
          .createUAC(`sip:drachtio@127.0.0.1:${faceSip.sipPort}`, { headers: { 'User-Agent': 'by-hand', 'X-esl-outbound': `127.0.0.1:${outPort}` }, localSdp: farSdp(rtpPort) })
          .then((dlg: { on(e: string, f: () => void): void }) => dlg.on('destroy', () => resolve()));
      });
      const [socket] = await accepted;
      const c = RawClient.wrap(socket);
      const data = await c.command('connect');
      expect(data.headers['Content-Type']).to.equal('command/reply');
      expect(decodeURIComponent(data.headers['Reply-Text']!)).to.equal('+OK\n');
      expect(data.headers['Event-Name']).to.equal('CHANNEL_DATA');
      const uuid = data.headers['Unique-ID']!;
      expect(data.headers['Channel-Unique-ID']).to.equal(uuid);
      expect(decodeURIComponent(data.headers['variable_sip_user_agent']!)).to.equal('by-hand');
      expect(esl.channels.has(uuid)).to.equal(true);
      expect((await c.command('myevents plain')).headers['Reply-Text']).to.equal('+OK Events Enabled');
      expect((await c.command('linger 30')).headers['Reply-Text']).to.equal('+OK will linger 30 seconds');
      expect((await c.command('sendmsg\ncall-command: hangup\nhangup-cause: USER_BUSY')).headers['Reply-Text']).to.equal('+OK');
      await bye;
      const hangup = plainHeaders((await c.next()).body);
      expect(hangup).to.include({ 'Event-Name': 'CHANNEL_HANGUP', 'Unique-ID': uuid, 'Hangup-Cause': 'USER_BUSY', 'Channel-Call-State': 'HANGUP' });
      expect(plainHeaders((await c.next()).body)['Event-Name']).to.equal('CHANNEL_HANGUP_COMPLETE');
      const linger = await c.next();
      expect(linger.raw).to.equal(
        `Content-Type: text/disconnect-notice\nControlled-Session-UUID: ${uuid}\nContent-Disposition: linger\nChannel-Name: sofia/drachtio_mrf/drachtio\nLinger-Time: 30\nContent-Length: 0\n\n`,
      );
      expect(esl.sessions.count).to.equal(0);
      // still open while it lingers: an api command is answered
      expect((await c.command('api hostname')).headers['Content-Type']).to.equal('api/response');
      expect((await c.command('exit')).headers['Reply-Text']).to.equal('+OK bye');
      expect((await c.next()).headers['Content-Disposition']).to.equal('disconnect');
      await c.closed;
    } finally {
      listener.close();
    }
  });

  it('an application the switch does not serve hangs the channel up (FreeSWITCH: Invalid Application), never a silent success', async () => {
    const ep = await ms.createEndpoint();
    const gone = new Promise<void>((resolve) => ep.once('destroy', () => resolve()));
    void ep.execute('no_such_app', 'x').catch(() => undefined);
    await gone;
    expect(esl.sessions.count).to.equal(0);
  });
});
