// A switch on another host (media-app/kit/media-server-outbound.ts; media-app/media-server/README.md
// "MEDIA_SERVER"): MEDIA_SERVER's listen= and advertise= say where drachtio-fsmrf's outbound-socket
// server listens and what the switch is told to dial. Each bad value is refused with its own problem,
// never quoting the value; a switch that is not on loopback is refused unless the listener is reachable.
// Live: our switch (esl/) on 127.0.0.3, the backend listening and advertising 127.0.0.2, a leg made
// whose far end's RTP reaches it.
import { expect } from 'chai';
import { once } from 'node:events';
import net from 'node:net';
import { parseMediaServer, describeMediaServer, type MediaServerSetting } from '../../../media-app/kit/media-server';
import { loadMediaAppConfig } from '../../../media-app/kit/config';
import { FsmrfBackend } from '../../../media-app/media-server/fsmrf/backend';
import { connectSwitch, SwitchConnectError } from '../../../media-app/media-server/fsmrf/connect';
import { loopbackSdp } from '../../../testkit/sdp';
import { until } from '../../../testkit/media-app/harness';
import { RtpParty } from './rtp-party';
import { freePort } from '../../../testkit/ports';
import { boundedOnce } from '../../../testkit/bounded';
import { startSwitchRig, type SwitchRig } from '../../../testkit/esl/switch-rig';
import { PASSWORD } from '../../../testkit/esl/client';

type Switch = Extract<MediaServerSetting, { kind: 'freeswitch' }>;

/** The setting of a good value (the test fails naming the problem otherwise). */
function good(v: string): Switch {
  const r = parseMediaServer(v);
  if ('problem' in r) throw new Error(`${v}: ${r.problem}`);
  if (r.kind !== 'freeswitch') throw new Error(`${v}: not a switch`);
  return r;
}

/** The problem of a bad value, as loadMediaAppConfig reports it (and the bare problem). */
function problem(v: string): string {
  const r = parseMediaServer(v);
  expect(r, v).to.have.property('problem');
  let msg = '';
  try {
    loadMediaAppConfig({ MEDIA_SERVER: v });
  } catch (e) {
    msg = (e as Error).message;
  }
  expect(msg, v).to.include(`MEDIA_SERVER: ${(r as { problem: string }).problem}`);
  return (r as { problem: string }).problem;
}

describe('MEDIA_SERVER listen= and advertise=', () => {
  it('absent: loopback, any port, as before (no listen or advertise in the setting)', () => {
    expect(good('freeswitch://127.0.0.1:8021?password=s3cr3t')).to.deep.equal({ kind: 'freeswitch', host: '127.0.0.1', port: 8021, password: 's3cr3t' });
  });

  it('listen=<ip>[:<port>] (IPv4, [IPv6], bare IPv6, percent-encoded) and advertise=<ip or host>[:<port>]', () => {
    expect(good('freeswitch://10.0.0.5:8021?password=s3cr3t&listen=10.0.0.2')).to.deep.include({ host: '10.0.0.5', password: 's3cr3t', listen: { host: '10.0.0.2', port: 0 } });
    expect(good('freeswitch://10.0.0.5:8021?listen=10.0.0.2:7000&advertise=media.internal:7000')).to.deep.include({
      listen: { host: '10.0.0.2', port: 7000 },
      advertise: { host: 'media.internal', port: 7000 },
    });
    expect(good('freeswitch://[fd00::5]:8021?listen=[fd00::2]:7000').listen).to.deep.equal({ host: 'fd00::2', port: 7000 });
    expect(good('freeswitch://[fd00::5]:8021?listen=fd00::2').listen).to.deep.equal({ host: 'fd00::2', port: 0 });
    expect(good('freeswitch://[fd00::5]:8021?listen=%5Bfd00%3A%3A2%5D%3A7000').listen).to.deep.equal({ host: 'fd00::2', port: 7000 });
    // a wildcard listener with what the switch dials; the parameters in any order
    const wild = good('freeswitch://fs.internal:8021?advertise=10.0.0.2&listen=0.0.0.0:7000&password=s3cr3t');
    expect(wild).to.deep.include({ listen: { host: '0.0.0.0', port: 7000 }, advertise: { host: '10.0.0.2', port: 0 } });
    expect(describeMediaServer(wild)).to.equal('freeswitch://fs.internal:8021?listen=0.0.0.0:7000&advertise=10.0.0.2');
    expect(describeMediaServer(good('freeswitch://10.0.0.5:8021?password=s3cr3t&listen=10.0.0.2'))).to.equal('freeswitch://10.0.0.5:8021?listen=10.0.0.2');
    // a local switch may be told to dial a non-loopback listener too
    expect(good('freeswitch://127.0.0.1:8021?listen=10.0.0.2').listen).to.deep.equal({ host: '10.0.0.2', port: 0 });
  });

  it('a switch on another host without a reachable listener: refused, saying why', () => {
    for (const v of ['freeswitch://10.0.0.5:8021', 'freeswitch://fs.example:8021?password=s3cr3t', 'freeswitch://[2001:db8::1]:8021', 'freeswitch://10.0.0.5:8021?listen=127.0.0.1:7000']) {
      expect(problem(v), v).to.match(/^the switch is on another host, so it could not reach fsmrf's outbound-socket listener on loopback: set listen=<ip>\[:<port>\]/);
    }
    expect(problem('freeswitch://10.0.0.5:8021?listen=10.0.0.2&advertise=127.0.0.1')).to.equal('advertise is a loopback address but the switch is on another host: it would dial itself');
    expect(problem('freeswitch://10.0.0.5:8021?listen=10.0.0.2&advertise=localhost')).to.match(/^advertise is a loopback address/);
  });

  it('each bad listen / advertise has its own problem, never quoting the query', () => {
    const cases: [string, RegExp][] = [
      ['freeswitch://h:8021?listen=10.0.0.2&listen=10.0.0.3&password=s3cr3t', /^listen given twice/],
      ['freeswitch://h:8021?advertise=a.b&advertise=a.c&listen=0.0.0.0', /^advertise given twice/],
      ['freeswitch://h:8021?listen=s3cr3t.example', /^listen must be an IP address of this host with an optional port 0-65535/],
      ['freeswitch://h:8021?listen=10.0.0.2:99999', /^listen must be an IP address/],
      ['freeswitch://h:8021?listen=[10.0.0.2]', /^listen must be an IP address/],
      ['freeswitch://h:8021?listen=[fe80::1%25eth0]', /^listen must be an IP address/],
      ['freeswitch://h:8021?listen=', /^listen must be an IP address/],
      ['freeswitch://h:8021?listen=224.0.0.1', /^listen must be a unicast address of this host$/],
      ['freeswitch://h:8021?listen=10.0.0.2&advertise=s3cr3t_x', /^advertise must be an IP address or a host name with an optional port 1-65535/],
      ['freeswitch://h:8021?listen=10.0.0.2:7000&advertise=a.b:0', /^advertise must be an IP address or a host name/],
      ['freeswitch://h:8021?listen=0.0.0.0', /^listen is a wildcard \(every address\): give advertise=.*the switch cannot dial a wildcard$/],
      ['freeswitch://h:8021?listen=[::]:7000', /^listen is a wildcard/],
      ['freeswitch://h:8021?listen=0.0.0.0&advertise=0.0.0.0', /^advertise must be an address the switch can dial, not a wildcard/],
      ['freeswitch://h:8021?listen=10.0.0.2&advertise=10.0.0.2:7000', /^advertise names a port but listen has none \(any free port\): give listen a fixed port too$/],
      ['freeswitch://h:8021?listen=%zz', /^listen is not valid percent-encoding$/],
      ['freeswitch://0.0.0.0:8021?listen=10.0.0.2', /^the event socket host must be an address to dial, not a wildcard/],
      ['freeswitch://h:8021?password=s3cr3t&s3cr3t', /^takes only \?password=…, listen=…, advertise=… \(percent-encode & in the password as %26\)$/],
    ];
    for (const [v, want] of cases) {
      const p = problem(v);
      expect(p, v).to.match(want);
      expect(p, v).not.to.include('s3cr3t');
    }
  });
});

describe('media-app fsmrf backend: a switch on another address', function () {
  this.timeout(30_000);
  let rig: SwitchRig | undefined;
  let backend: FsmrfBackend | undefined;

  afterEach(async () => {
    backend?.close();
    backend = undefined;
    await rig?.close();
    rig = undefined;
  });

  it('the switch on 127.0.0.3 dials the listener on 127.0.0.2 that MEDIA_SERVER names; a leg is made and its media flows', async () => {
    rig = await startSwitchRig({}, '127.0.0.3');
    const setting = good(`freeswitch://127.0.0.3:${rig.port}?password=${PASSWORD}&listen=127.0.0.2&advertise=127.0.0.2`);
    backend = await FsmrfBackend.connect(rig.appSrf, setting, { connectTimeoutMs: 5000 });
    // the event socket's connection comes from the listen address: the switch sees one address for both
    expect(rig.esl.authenticatedFrom('127.0.0.2'), 'the event socket connection is from 127.0.0.2').to.equal(true);
    expect(rig.esl.authenticatedFrom('127.0.0.1'), 'and not from 127.0.0.1').to.equal(false);
    const party = new RtpParty();
    try {
      const leg = await backend.createEndpoint({ remoteSdp: loopbackSdp(await party.open()) });
      const calls = [...rig.esl.channels.values()] as unknown as { channel: { sip: { eslOutbound: string } }; listener: { address: string } | null }[];
      expect(calls).to.have.length(1);
      // the INVITE told the switch to dial 127.0.0.2 (X-esl-outbound), and the channel's outbound socket went there
      expect(calls[0]!.channel.sip.eslOutbound).to.match(/^127\.0\.0\.2:\d+$/);
      expect(calls[0]!.listener?.address.replace(/^::ffff:/, '')).to.equal('127.0.0.2');
      // media flows: what the far end sends reaches the leg, as the switch counts it (asked over the event socket)
      await party.talk({ address: '127.0.0.1', port: leg.local.port }, 0, 20);
      const stats = await until(async () => {
        const s = await leg.getStats();
        return s.packetsReceived >= 20 ? s : null;
      }, 3000);
      expect(stats.packetsReceived).to.equal(20);
      await leg.destroy();
    } finally {
      party.close();
    }
  });

  it('a fixed listen port, advertised with its port: the reconnect after a lost event socket listens there again, and legs go there', async () => {
    rig = await startSwitchRig({}, '127.0.0.3');
    const port = await freePort('127.0.0.2'); // checked free where it listens (this shard's slice, handed out in turn)
    const setting = good(`freeswitch://127.0.0.3:${rig.port}?password=${PASSWORD}&listen=127.0.0.2:${port}&advertise=127.0.0.2:${port}`);
    backend = await FsmrfBackend.connect(rig.appSrf, setting, { connectTimeoutMs: 5000, reconnect: { minMs: 100, maxMs: 100 } });
    const first = backend.link.ms;
    const down = once(backend.link, 'down');
    for (const l of rig.esl.connections) (l as unknown as { socket: net.Socket }).socket.destroy();
    await down;
    await boundedOnce(backend.link, 'up', 10_000, 'the reconnect');
    expect(backend.link.ms).not.to.equal(first);
    expect(rig.esl.authenticatedFrom('127.0.0.2'), 'connected again from 127.0.0.2').to.equal(true);
    const party = new RtpParty();
    try {
      const leg = await backend.createEndpoint({ remoteSdp: loopbackSdp(await party.open()) });
      const calls = [...rig.esl.channels.values()] as unknown as { channel: { sip: { eslOutbound: string } }; listener: { address: string } | null }[];
      expect(calls.map((c) => c.channel.sip.eslOutbound)).to.deep.equal([`127.0.0.2:${port}`]);
      expect(calls[0]!.listener?.address.replace(/^::ffff:/, '')).to.equal('127.0.0.2');
      await leg.destroy();
    } finally {
      party.close();
    }
  });

  it('a listen address that is not this host: the connect fails naming it, nothing thrown past it', async () => {
    rig = await startSwitchRig();
    // 192.0.2.1 (TEST-NET-1) is no address of this host: fsmrf's own listen would be an uncaught EADDRNOTAVAIL
    const err = await connectSwitch(rig.appSrf, { host: '127.0.0.1', port: rig.port, password: PASSWORD }, { timeoutMs: 5000, listenAddress: '192.0.2.1' }).then(
      (ms) => (ms.disconnect(), null),
      (e: unknown) => e as Error,
    );
    expect(err).to.be.instanceOf(SwitchConnectError);
    expect(err!.message).to.match(/the outbound-socket listener cannot listen on 192\.0\.2\.1:0: EADDRNOTAVAIL/);
  });
});
