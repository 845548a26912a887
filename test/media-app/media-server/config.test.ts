// MEDIA_SERVER (media-app/kit/media-server.ts): unset is the embedded engine; freeswitch://host:port
// names an event socket driven through drachtio-fsmrf; a bad value stops media-app/main.ts with exit
// code 2 and a line naming MEDIA_SERVER, and the password never appears in what is printed; a good
// one runs media-app on the fsmrf backend, connected to that switch.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describeMediaServer, parseMediaServer } from '../../../media-app/kit/media-server';
import { loadMediaAppConfig } from '../../../media-app/kit/config';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import pino from 'pino';
import { testDatabaseUrl } from '../../../testkit/db';
import { SECRET, startSipServer } from '../../../testkit/media-app/harness';
import { startTestSwitch, TEST_SWITCH_PASSWORD } from '../../../testkit/media-app/switch';

const ROOT = path.resolve(__dirname, '../../..');

describe('MEDIA_SERVER', () => {
  it('unset or empty: the embedded engine', () => {
    expect(parseMediaServer(undefined)).to.deep.equal({ kind: 'embedded' });
    expect(parseMediaServer(' ')).to.deep.equal({ kind: 'embedded' });
    expect(loadMediaAppConfig({}).mediaServer).to.deep.equal({ kind: 'embedded' });
  });

  it('freeswitch://host:port with its password (FreeSWITCH default ClueCon), shown without it', () => {
    const s = parseMediaServer('freeswitch://127.0.0.1:8021?password=s3cr3t');
    expect(s).to.deep.equal({ kind: 'freeswitch', host: '127.0.0.1', port: 8021, password: 's3cr3t' });
    expect(parseMediaServer('freeswitch://[::1]:8021')).to.deep.equal({ kind: 'freeswitch', host: '::1', port: 8021, password: 'ClueCon' });
    expect(describeMediaServer(s as { kind: 'freeswitch'; host: string; port: number; password: string })).to.equal('freeswitch://127.0.0.1:8021');
  });

  it('each bad value is one problem that never quotes the value', () => {
    for (const bad of [
      'fs.example:8021',
      'http://h:8021?password=s3cr3t',
      'freeswitch://h?password=s3cr3t',
      'freeswitch://u:s3cr3t@h:8021',
      'freeswitch://h:8021/x?password=s3cr3t',
      'freeswitch://h:8021?pw=s3cr3t',
      'freeswitch://h:99999?password=s3cr3t',
      'freeswitch://h:8021?password=',
    ]) {
      let msg = '';
      try {
        loadMediaAppConfig({ MEDIA_SERVER: bad });
      } catch (e) {
        msg = (e as Error).message;
      }
      expect(msg, bad).to.match(/^ {2}- MEDIA_SERVER: /m);
      expect(msg, bad).not.to.include('s3cr3t');
    }
  });

  it("the password is percent-decoded as written: a literal '+' stays '+', %2B %23 %26 %25 %20 are + # & % space", () => {
    const pw = (v: string) => (parseMediaServer(`freeswitch://127.0.0.1:8021?password=${v}`) as { password?: string }).password;
    expect(pw('a+b')).to.equal('a+b');
    expect(pw('a%2Bb')).to.equal('a+b');
    expect(pw('x%23y%26z%25w%20v')).to.equal('x#y&z%w v');
    expect(pw('k=v')).to.equal('k=v');
  });

  it("refuses what would silently change the password: an unencoded '#', an unencoded '&', a bad %-escape, two passwords", () => {
    const cases: [string, RegExp][] = [
      ['freeswitch://127.0.0.1:8021?password=s3cr3t#tail', /percent-encode # in the password as %23/],
      ['freeswitch://127.0.0.1:8021?password=s3cr3t#', /percent-encode # in the password as %23/],
      ['freeswitch://127.0.0.1:8021?password=s3cr3t&tail', /takes only \?password=…, listen=…, advertise=… \(percent-encode & in the password as %26\)/],
      ['freeswitch://127.0.0.1:8021?password=s3cr3t&password=tail', /password given twice/],
      ['freeswitch://127.0.0.1:8021?password=s3cr3t%zztail', /not valid percent-encoding \(write % as %25\)/],
    ];
    for (const [bad, problem] of cases) {
      let msg = '';
      try {
        loadMediaAppConfig({ MEDIA_SERVER: bad });
      } catch (e) {
        msg = (e as Error).message;
      }
      expect(msg, bad).to.match(problem);
      expect(msg, bad).not.to.include('s3cr3t');
      expect(msg, bad).not.to.include('tail');
    }
  });

  it("refuses a switch on another host while fsmrf's outbound-socket listener is on loopback (fsmrf-remote.test.ts: listen=); loopback ones pass", () => {
    for (const remote of ['freeswitch://10.0.0.5:8021', 'freeswitch://fs.example:8021?password=s3cr3t', 'freeswitch://[2001:db8::1]:8021']) {
      const r = parseMediaServer(remote);
      expect(r, remote)
        .to.have.property('problem')
        .that.matches(/^the switch is on another host, so it could not reach fsmrf's outbound-socket listener on loopback/);
    }
    expect(parseMediaServer('freeswitch://0.0.0.0:8021'))
      .to.have.property('problem')
      .that.matches(/^the event socket host must be an address to dial, not a wildcard/);
    for (const [local, host] of [
      ['freeswitch://127.0.0.2:8021', '127.0.0.2'],
      ['freeswitch://[::1]:8021', '::1'],
      ['freeswitch://localhost:8021', 'localhost'],
    ]) {
      expect(parseMediaServer(local), local).to.include({ kind: 'freeswitch', host });
    }
  });

  it('MEDIA_SERVER_RECONNECT_MIN_MS / _MAX_MS: 500 doubling to 30000 by default; the cap never below the first delay', () => {
    expect(loadMediaAppConfig({}).mediaServerReconnect).to.deep.equal({ minMs: 500, maxMs: 30_000 });
    expect(loadMediaAppConfig({ MEDIA_SERVER_RECONNECT_MIN_MS: '50', MEDIA_SERVER_RECONNECT_MAX_MS: '200' }).mediaServerReconnect).to.deep.equal({ minMs: 50, maxMs: 200 });
    expect(loadMediaAppConfig({ MEDIA_SERVER_RECONNECT_MIN_MS: '800', MEDIA_SERVER_RECONNECT_MAX_MS: '200' }).mediaServerReconnect).to.deep.equal({ minMs: 800, maxMs: 800 });
    expect(() => loadMediaAppConfig({ MEDIA_SERVER_RECONNECT_MIN_MS: '0' })).to.throw(/MEDIA_SERVER_RECONNECT_MIN_MS/);
  });

  it('MEDIA_SERVER_TAP_LISTEN: loopback by default; a wildcard host is refused on the fsmrf backend (the switch dials this address)', () => {
    const FS = { MEDIA_SERVER: 'freeswitch://127.0.0.1:8021' };
    expect(loadMediaAppConfig({}).mediaServerTaps).to.include({ host: '127.0.0.1', port: 0 });
    expect(loadMediaAppConfig({ ...FS, MEDIA_SERVER_TAP_LISTEN: '10.0.0.5:9700' }).mediaServerTaps).to.include({ host: '10.0.0.5', port: 9700 });
    for (const wild of ['0.0.0.0:9700', '[::]:9700', '[0:0:0:0:0:0:0:0]:9700']) {
      expect(() => loadMediaAppConfig({ ...FS, MEDIA_SERVER_TAP_LISTEN: wild }), wild).to.throw(/MEDIA_SERVER_TAP_LISTEN: .*address the switch reaches/);
      // unused on the embedded engine: a setting left there stops nothing
      expect(loadMediaAppConfig({ MEDIA_SERVER_TAP_LISTEN: wild }).mediaServerTaps.port, wild).to.equal(9700);
    }
  });

  it('MEDIA_SERVER_CONNECT_TIMEOUT_MS: 5000 by default, bounded', () => {
    expect(loadMediaAppConfig({}).mediaServerConnectTimeoutMs).to.equal(5000);
    expect(loadMediaAppConfig({ MEDIA_SERVER_CONNECT_TIMEOUT_MS: '250' }).mediaServerConnectTimeoutMs).to.equal(250);
    expect(() => loadMediaAppConfig({ MEDIA_SERVER_CONNECT_TIMEOUT_MS: '0' })).to.throw(/MEDIA_SERVER_CONNECT_TIMEOUT_MS/);
  });

  it('media-app refuses to start on a non-loopback switch without listen=: exit code 2 and the reason', async function () {
    this.timeout(30_000);
    const { code, out } = await startMediaApp('freeswitch://10.0.0.5:8021?password=s3cr3t');
    expect(code, out).to.equal(2);
    expect(out).to.include("MEDIA_SERVER: the switch is on another host, so it could not reach fsmrf's outbound-socket listener on loopback");
    expect(out).not.to.include('s3cr3t');
  });

  it('media-app refuses to start on a bad value: exit code 2, MEDIA_SERVER named, the password not printed', async function () {
    this.timeout(30_000);
    const { code, out } = await startMediaApp('freeswitch://127.0.0.1?password=s3cr3t');
    expect(code, out).to.equal(2);
    expect(out).to.match(/MEDIA_SERVER: must name the event socket port/);
    expect(out).not.to.include('s3cr3t');
  });

  it('a good freeswitch:// value runs media-app on the fsmrf backend: it connects to that event socket, never the embedded engine', async function () {
    this.timeout(60_000);
    const logger = pino({ level: 'silent' });
    const sip = await startSipServer(logger);
    const face = await startSipServer(logger);
    const sw = await startTestSwitch({ sipPort: face.sipPort, drachtioPort: face.drachtioPort, secret: SECRET }, logger);
    const port = sw.sw.listening.port;
    const proc = spawn(process.execPath, ['--require', 'tsx/cjs', 'media-app/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        MEDIA_SERVER: sw.mediaServer,
        MEDIA_APP_METRICS_LISTEN: 'off',
        DATABASE_URL: await testDatabaseUrl(),
        REDIS_URL: process.env.TEST_REDIS_URL,
        REDIS_KEY_PREFIX: `tmsw${process.pid}_${randomBytes(3).toString('hex')}:`,
        DATA_DIR: path.join(os.tmpdir(), `media-app-fsmrf-${process.pid}`),
        SIP_DOMAIN: 'sip.test',
        JWT_SECRET: 'y'.repeat(40),
        DRACHTIO_HOST: '127.0.0.1',
        DRACHTIO_PORT: String(sip.drachtioPort),
        DRACHTIO_SECRET: SECRET,
        MEDIA_APP_NODE_ID: `fsmrf-${process.pid}`,
        MEDIA_APP_READY_LINE: '1',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const exited = new Promise<number | null>((r) => proc.on('exit', (c) => r(c)));
    try {
      const ready = new Promise<void>((resolve) => {
        const look = (d: Buffer) => {
          out += d;
          if (/^READY /m.test(out)) resolve();
        };
        proc.stdout.on('data', look);
        proc.stderr.on('data', look);
      });
      const first = await Promise.race([ready.then(() => 'ready'), exited.then((c) => `exited ${c}`)]);
      expect(first, out).to.equal('ready');
      expect(out).to.include('media on the fsmrf backend');
      expect(out).to.include(`"media_server":"freeswitch://127.0.0.1:${port}"`);
      expect(out).not.to.include(TEST_SWITCH_PASSWORD);
      // fsmrf's connection to the switch is there (an authenticated event-socket client)
      expect(sw.sw.esl.authenticatedFrom('127.0.0.1'), 'media-app is connected to the event socket').to.equal(true);
      // its prompt cache: its own, under DATA_DIR (MEDIA_SERVER_PROMPT_CACHE_DIR unset), 0700
      const cache = fs.statSync(path.join(os.tmpdir(), `media-app-fsmrf-${process.pid}`, 'prompt-cache'));
      expect([cache.mode & 0o777, cache.uid], 'the prompt cache').to.deep.equal([0o700, process.getuid!()]);
    } finally {
      if (proc.exitCode === null) proc.kill('SIGINT');
      await exited;
      await sw.stop();
      for (const s of [face, sip]) {
        await s.drachtio.close();
        await s.stack.stop();
      }
    }
  });
});

/** media-app/main.ts with MEDIA_SERVER set: its exit code and what it printed. */
async function startMediaApp(mediaServer: string): Promise<{ code: number | null; out: string }> {
  const proc = spawn(process.execPath, ['--require', 'tsx/cjs', 'media-app/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, MEDIA_SERVER: mediaServer, MEDIA_APP_METRICS_LISTEN: 'off' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const code = await new Promise<number | null>((r) => proc.on('exit', (c) => r(c)));
  return { code, out };
}
