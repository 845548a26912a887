// The start command with the switch (ESL_LISTEN) and media-app on the fsmrf backend (MEDIA_SERVER): the
// switch's uuid_audio_fork dials media-app's audio fork server (MEDIA_SERVER_TAP_LISTEN, loopback by
// default), a private address its egress policy refuses unless allowed. scripts/processes.ts gives the
// switch's process that host in its EGRESS_ALLOW_CIDRS, and only the switch's. Checked with the real
// egress policy (core/net) built from each process's environment as the start command makes it.
import { expect } from 'chai';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';
import { platformProcesses } from '../../scripts/processes';

const SWITCH = { ESL_LISTEN: '127.0.0.1:8021', ESL_PASSWORD: 'x' };
const MEDIA_SERVER = 'freeswitch://127.0.0.1:8021?password=x';

/** The environment a process of the start command gets (scripts/start.ts: the command's, then its own). */
function envOf(env: NodeJS.ProcessEnv, name: string): NodeJS.ProcessEnv {
  const p = platformProcesses(env).find((x) => x.name === name);
  if (!p) throw new Error(`no process ${name}`);
  return { ...env, ...p.env };
}

/** Whether the process's egress policy lets it connect to `host` (an address: no lookup). */
function reaches(env: NodeJS.ProcessEnv, host: string): boolean {
  const policy = new EgressPolicy(egressSettingsFromEnv(env));
  try {
    policy.assertHost(host, 'the audio fork URL');
    return true;
  } catch {
    return false;
  }
}

describe("the start command: the switch's egress allows media-app's audio fork server", () => {
  it('MEDIA_SERVER set, the tap address by default (127.0.0.1:0): the switch reaches it, media-app still does not', () => {
    const env = { ...SWITCH, MEDIA_SERVER };
    expect(reaches(envOf(env, 'esl'), '127.0.0.1'), 'the switch reaches the tap').to.equal(true);
    expect(envOf(env, 'esl').EGRESS_ALLOW_CIDRS).to.equal('127.0.0.1/32');
    // only the switch: media-app (and the rest) keep the operator's list, loopback refused
    for (const name of ['media-app', 'control-api', 'sip-server', 'switch-sip']) expect(reaches(envOf(env, name), '127.0.0.1'), name).to.equal(false);
    // a loopback address that is not the tap's stays refused to the switch too
    expect(reaches(envOf(env, 'esl'), '127.0.0.2')).to.equal(false);
  });

  it("the operator's EGRESS_ALLOW_CIDRS is kept, the tap host added once; IPv6 and localhost", () => {
    expect(envOf({ ...SWITCH, MEDIA_SERVER, EGRESS_ALLOW_CIDRS: '10.0.0.0/8, 127.0.0.1/32', MEDIA_SERVER_TAP_LISTEN: '127.0.0.1:9700' }, 'esl').EGRESS_ALLOW_CIDRS).to.equal('10.0.0.0/8,127.0.0.1/32');
    const v6 = envOf({ ...SWITCH, MEDIA_SERVER, EGRESS_ALLOW_CIDRS: '10.0.0.0/8', MEDIA_SERVER_TAP_LISTEN: '[::1]:9700' }, 'esl');
    expect(v6.EGRESS_ALLOW_CIDRS).to.equal('10.0.0.0/8,::1/128');
    expect(reaches(v6, '::1')).to.equal(true);
    expect(reaches(v6, '10.1.2.3'), "the operator's range").to.equal(true);
    const local = envOf({ ...SWITCH, MEDIA_SERVER, MEDIA_SERVER_TAP_LISTEN: 'localhost:9700' }, 'esl');
    expect(local.EGRESS_ALLOW_CIDRS).to.equal('127.0.0.1/32,::1/128');
    const lan = envOf({ ...SWITCH, MEDIA_SERVER, MEDIA_SERVER_TAP_LISTEN: '192.168.7.20:9700' }, 'esl');
    expect(reaches(lan, '192.168.7.20')).to.equal(true);
    expect(reaches(lan, '192.168.7.21')).to.equal(false);
  });

  it('without MEDIA_SERVER (or without the switch) nothing is added', () => {
    expect(envOf({ ...SWITCH }, 'esl').EGRESS_ALLOW_CIDRS).to.equal(undefined);
    expect(reaches(envOf({ ...SWITCH }, 'esl'), '127.0.0.1')).to.equal(false);
    expect(platformProcesses({ MEDIA_SERVER }).map((p) => p.name)).to.deep.equal(['sip-server', 'media-app', 'evals', 'control-api']);
  });

  it('a tap host the switch cannot be allowed by (a name, a wildcard) or a bad value stops the start with a message naming the variable', () => {
    expect(() => platformProcesses({ ...SWITCH, MEDIA_SERVER, MEDIA_SERVER_TAP_LISTEN: 'media.internal:9700' })).to.throw(/^MEDIA_SERVER_TAP_LISTEN: .*IP address or localhost/);
    expect(() => platformProcesses({ ...SWITCH, MEDIA_SERVER, MEDIA_SERVER_TAP_LISTEN: 'nonsense' })).to.throw(/^MEDIA_SERVER_TAP_LISTEN: must be host:port/);
    // a wildcard is where a server listens, not an address the switch can dial (nor a host to allow)
    for (const wild of ['0.0.0.0:9700', '[::]:9700']) {
      expect(() => platformProcesses({ ...SWITCH, MEDIA_SERVER, MEDIA_SERVER_TAP_LISTEN: wild }), wild).to.throw(/^MEDIA_SERVER_TAP_LISTEN: .*address the switch reaches/);
    }
  });
});
