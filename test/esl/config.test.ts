// The event socket's settings (esl/config.ts): off by default, loopback when only a port is given, a
// password required, one line per bad variable, and every variable documented in .env.example.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { ESL_VARIABLES, loadEslConfig } from '../../esl/config';

describe('esl config', () => {
  it('is off without ESL_LISTEN (empty counts as unset), whatever else is set', () => {
    expect(loadEslConfig({})).to.equal(null);
    expect(loadEslConfig({ ESL_LISTEN: '', ESL_PASSWORD: 'x' })).to.equal(null);
  });

  it('a bare port listens on loopback; host:port and [v6]:port as given; the defaults', () => {
    expect(loadEslConfig({ ESL_LISTEN: '8021', ESL_PASSWORD: 'pw' })).to.deep.equal({
      listen: { host: '127.0.0.1', port: 8021 },
      password: 'pw',
      sipAddress: '127.0.0.1:5080',
      heartbeatMs: 20_000,
      authTimeoutMs: 25_000,
      authLimit: { max: 5, windowMs: 60_000 },
      maxSessions: 1000,
      forkConnectTimeoutMs: 5000,
      conferenceFiles: { recordings: path.resolve('.data/recordings'), sounds: path.resolve('.data/switch-prompts') },
    });
    expect(loadEslConfig({ ESL_LISTEN: '10.0.0.5:8021', ESL_PASSWORD: 'pw' })!.listen).to.deep.equal({ host: '10.0.0.5', port: 8021 });
    expect(loadEslConfig({ ESL_LISTEN: '[::1]:8021', ESL_PASSWORD: 'pw' })!.listen).to.deep.equal({ host: '::1', port: 8021 });
    const c = loadEslConfig({ ESL_LISTEN: '8021', ESL_PASSWORD: 'pw', ESL_SIP_ADDRESS: '192.0.2.10:5090', ESL_HEARTBEAT_MS: '0', ESL_AUTH_MAX_FAILURES: '3' })!;
    expect(c).to.deep.include({ sipAddress: '192.0.2.10:5090', heartbeatMs: 0, authLimit: { max: 3, windowMs: 60_000 } });
  });

  it("the conference files' directories: under DATA_DIR by default, else as set, made absolute", () => {
    expect(loadEslConfig({ ESL_LISTEN: '8021', ESL_PASSWORD: 'pw', DATA_DIR: '/srv/ov' })!.conferenceFiles).to.deep.equal({ recordings: '/srv/ov/recordings', sounds: '/srv/ov/switch-prompts' });
    expect(loadEslConfig({ ESL_LISTEN: '8021', ESL_PASSWORD: 'pw', ESL_RECORDINGS_DIR: '/var/rec', ESL_SOUNDS_DIR: 'sounds' })!.conferenceFiles).to.deep.equal({
      recordings: '/var/rec',
      sounds: path.resolve('sounds'),
    });
  });

  it('refuses a missing or default password and bad values, one line each, never echoing the password', () => {
    expect(() => loadEslConfig({ ESL_LISTEN: '8021' })).to.throw(/^ESL_PASSWORD: required when ESL_LISTEN is set$/);
    expect(() => loadEslConfig({ ESL_LISTEN: '8021', ESL_PASSWORD: 'ClueCon' })).to.throw(/ESL_PASSWORD: must not be FreeSWITCH's published default/);
    let msg = '';
    try {
      loadEslConfig({ ESL_LISTEN: 'nowhere:', ESL_PASSWORD: 'hunter22', ESL_SIP_ADDRESS: 'sip.example.com:5080', ESL_AUTH_TIMEOUT_MS: '0', ESL_MAX_SESSIONS: 'lots' });
    } catch (e) {
      msg = (e as Error).message;
    }
    const lines = msg.split('\n');
    expect(lines).to.have.length(4);
    expect(msg)
      .to.match(/^ESL_LISTEN: /m)
      .and.match(/^ESL_SIP_ADDRESS: must be an IPv4 address:port$/m);
    expect(msg)
      .to.match(/^ESL_AUTH_TIMEOUT_MS: /m)
      .and.match(/^ESL_MAX_SESSIONS: /m);
    expect(msg).not.to.include('hunter22');
  });

  it('.env.example documents every variable esl/config.ts reads', () => {
    const example = fs.readFileSync(path.join(__dirname, '../../.env.example'), 'utf8');
    expect(ESL_VARIABLES.length).to.equal(11);
    for (const v of ESL_VARIABLES) expect(example, v).to.match(new RegExp(`^#?\\s*${v}=`, 'm'));
  });
});
