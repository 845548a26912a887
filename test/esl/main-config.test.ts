// esl/main.ts's own settings (esl/main-config.ts) and the start command's list of processes
// (scripts/processes.ts): the switch is off unless ESL_LISTEN is set, its sip-server listens only on
// the profile's address, and every variable is documented in .env.example.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { ESL_PROCESS_VARIABLES, loadEslProcessConfig } from '../../esl/main-config';
import { platformProcesses } from '../../scripts/processes';

describe('esl process settings and the start command', () => {
  it('the defaults; one line per bad value, never a secret', () => {
    expect(loadEslProcessConfig({})).to.deep.equal({
      drachtio: { host: '127.0.0.1', port: 9023, secret: 'cymru' },
      rtp: { bindHost: '127.0.0.1', advertisedHost: undefined, min: 35000, max: 39999, workers: 1 },
      stopTimeoutMs: 5000,
    });
    let msg = '';
    try {
      loadEslProcessConfig({ ESL_DRACHTIO_PORT: '70000', ESL_DRACHTIO_SECRET: 's3cr3t', ESL_RTP_PORT_MIN: '5000', ESL_RTP_PORT_MAX: '4000', ESL_MEDIA_WORKERS: 'x' });
    } catch (e) {
      msg = (e as Error).message;
    }
    expect(msg.split('\n')).to.have.length(2);
    expect(msg)
      .to.match(/^ESL_DRACHTIO_PORT: /m)
      .and.match(/^ESL_MEDIA_WORKERS: /m);
    expect(() => loadEslProcessConfig({ ESL_RTP_PORT_MIN: '5000', ESL_RTP_PORT_MAX: '4000' })).to.throw(/^ESL_RTP_PORT_MIN: must be below ESL_RTP_PORT_MAX$/);
    expect(msg).not.to.include('s3cr3t');
  });

  it('.env.example documents every variable and leaves the switch off', () => {
    const example = fs.readFileSync(path.join(__dirname, '../../.env.example'), 'utf8');
    for (const v of ESL_PROCESS_VARIABLES) expect(example, v).to.match(new RegExp(`^#?\\s*${v}=`, 'm'));
    expect(example).to.not.match(/^ESL_LISTEN=/m);
  });

  it('the start command runs the platform three (and the evals worker) alone unless ESL_LISTEN is set (empty counts as unset)', () => {
    expect(platformProcesses({}).map((p) => p.name)).to.deep.equal(['sip-server', 'media-app', 'evals', 'control-api']);
    expect(platformProcesses({ ESL_LISTEN: ' ' }).map((p) => p.name)).to.deep.equal(['sip-server', 'media-app', 'evals', 'control-api']);
  });

  it("with ESL_LISTEN: the switch's sip-server on the profile's address only, then esl/main.ts, before media-app", () => {
    const procs = platformProcesses({ ESL_LISTEN: '8021', ESL_SIP_ADDRESS: '10.1.2.3:5090', ESL_DRACHTIO_PORT: '9030', ESL_DRACHTIO_SECRET: 'x', SIP_WS_PORT: '5066' });
    expect(procs.map((p) => [p.name, p.entry])).to.deep.equal([
      ['sip-server', 'sip-server/main.ts'],
      ['switch-sip', 'sip-server/main.ts'],
      ['esl', 'esl/main.ts'],
      ['media-app', 'media-app/main.ts'],
      ['evals', 'evals/main.ts'],
      ['control-api', 'control-api/main.ts'],
    ]);
    expect(procs[1]!.env).to.include({
      SIP_LISTEN_HOST: '10.1.2.3',
      SIP_PORT: '5090',
      SIP_ADVERTISED_HOST: '10.1.2.3',
      SIP_WS_PORT: '',
      SIP_WSS_PORT: '',
      SIP_TLS_CERT: '',
      SIP_METRICS_LISTEN: 'off',
      SIP_CAPTURE: 'off',
    });
    expect(procs[1]!.env).to.include({ DRACHTIO_HOST: '127.0.0.1', DRACHTIO_PORT: '9030', DRACHTIO_SECRET: 'x' });
    expect(procs[0]!.env).to.deep.equal({});
  });
});
