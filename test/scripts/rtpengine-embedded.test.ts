// The start command's embedded rtpengine (scripts/rtpengine.ts): skipped for an external RTPENGINE_NG,
// bad port settings refused, and the command line it builds starts a real rtpengine that answers ng.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { embeddedRtpengine, RTPENGINE_DEFAULTS } from '../../scripts/rtpengine';
import { ngPing } from '../../testkit/rtpengine';
import { freePort, portBlock } from '../../testkit/ports';

describe('scripts/rtpengine: the embedded rtpengine', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rtpe-start-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('defaults: ng on loopback, media ports clear of the engine range (20000-30000)', () => {
    const r = embeddedRtpengine({}, dir)!;
    expect(r.ng).to.equal(RTPENGINE_DEFAULTS.ng);
    expect(r.args).to.include('--interface=127.0.0.1').and.include('--port-min=40000').and.include('--port-max=44999').and.include('--table=-1');
    expect(RTPENGINE_DEFAULTS.portMin).to.be.greaterThan(30000);
    expect(embeddedRtpengine({ RTP_BIND_HOST: '127.0.0.1', RTP_ADVERTISED_HOST: '127.0.0.9' }, dir)!.args).to.include('--interface=127.0.0.1!127.0.0.9');
  });

  it('an external RTPENGINE_NG starts none; bad port settings are refused', () => {
    expect(embeddedRtpengine({ RTPENGINE_NG: '127.0.0.1:2223' }, dir)).to.equal(null);
    for (const [min, max] of [
      ['45000', '44000'],
      ['80', '2000'],
      ['40000', '70000'],
      ['x', '41000'],
    ]) {
      expect(() => embeddedRtpengine({ RTPENGINE_PORT_MIN: min, RTPENGINE_PORT_MAX: max }, dir), `${min}-${max}`).to.throw(/RTPENGINE_PORT_MIN/);
    }
  });

  it('its command line runs a real rtpengine that answers ng ping', async function () {
    this.timeout(15_000);
    const media = portBlock('rtpengine', 100); // this test process's share: no other process's rtpengine there
    const r = embeddedRtpengine({ RTPENGINE_PORT_MIN: String(media.min), RTPENGINE_PORT_MAX: String(media.max) }, dir)!;
    // the same command on a free ng port (the default one may be taken by a running platform)
    const port = await freePort();
    const args = r.args.map((a) => (a.startsWith('--listen-ng=') ? `--listen-ng=127.0.0.1:${port}` : a));
    const proc = spawn(r.command, args, { stdio: 'ignore' });
    try {
      let ok = false;
      for (let i = 0; i < 50 && !ok; i++) ok = await ngPing(port, '127.0.0.1', 200);
      expect(ok, 'pong').to.equal(true);
    } finally {
      proc.kill('SIGTERM');
    }
  });
});
