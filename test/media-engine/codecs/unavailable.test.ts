// Without the native codec module the engine must say so and refuse Opus, G.722 and the resampler
// rather than pretend: a copy of the build script and the engine's codec sources in a scratch tree,
// built with no C compiler on PATH, then loaded in a child process.
import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

describe('media-engine codecs: without the native module', function () {
  this.timeout(60_000);
  let tmp = '';
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'codecs-missing-'));
    for (const dir of ['scripts', 'media-engine/native', 'media-engine/codecs', 'core/audio', 'bin']) fs.mkdirSync(path.join(tmp, dir), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'scripts/build-native.sh'), path.join(tmp, 'scripts/build-native.sh'));
    // the codecs' pure floor (codec names, G.711) lives in core/audio
    for (const dir of ['media-engine/native', 'media-engine/codecs', 'core/audio']) {
      for (const f of fs.readdirSync(path.join(ROOT, dir))) if (/\.(c|h|ts)$/.test(f)) fs.copyFileSync(path.join(ROOT, dir, f), path.join(tmp, dir, f));
    }
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(tmp, 'node_modules'));
    // a PATH with node and the few tools the script needs, but no C compiler
    for (const tool of ['dirname', 'basename', 'mkdir', 'rm', 'mv']) {
      fs.symlinkSync(
        execFileSync('/bin/bash', ['-c', `command -v ${tool}`])
          .toString()
          .trim(),
        path.join(tmp, 'bin', tool),
      );
    }
    fs.symlinkSync(process.execPath, path.join(tmp, 'bin', 'node'));
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('the build says which module is missing and what the engine then lacks, and does not fail the set-up', () => {
    const r = spawnSync('/bin/bash', [path.join(tmp, 'scripts/build-native.sh')], { env: { PATH: path.join(tmp, 'bin') }, encoding: 'utf8' });
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stderr).to.include('codecs.node: no C compiler: the engine has G.711 only and refuses Opus and G.722');
    expect(r.stderr).to.include('rtp_io.node: no C compiler: media workers use node:dgram for RTP');
    expect(fs.existsSync(path.join(tmp, 'media-engine/native/build/codecs.node'))).to.equal(false);
  });

  it('Opus, G.722 and the resampler are refused with ERR_CODEC_UNAVAILABLE and the reason; G.711 works', () => {
    const probe = path.join(tmp, 'probe.ts');
    fs.writeFileSync(
      probe,
      `import { codecAvailability, createCodec, Resampler } from './media-engine/codecs';
const tryIt = (f: () => unknown) => { try { f(); return 'created'; } catch (e) { return { code: (e as { code?: string }).code, message: (e as Error).message }; } };
const pcmu = createCodec('PCMU');
const bytes = new Uint8Array(160);
const n = pcmu.encode(new Int16Array(160).fill(1000), bytes);
const back = new Int16Array(160);
pcmu.decode(bytes, back, 0, n);
console.log(JSON.stringify({ availability: codecAvailability(), opus: tryIt(() => createCodec('opus')), g722: tryIt(() => createCodec('G722')),
  resampler: tryIt(() => new Resampler(16000, 8000)), pcmu: back[10] }));
`,
    );
    const out = execFileSync(process.execPath, ['--import', 'tsx', probe], { cwd: tmp, encoding: 'utf8' });
    const r = JSON.parse(out.trim().split('\n').pop() ?? '{}') as {
      availability: Record<string, { available: boolean; reason?: string }>;
      opus: { code: string; message: string };
      g722: { code: string; message: string };
      resampler: { code: string; message: string };
      pcmu: number;
    };
    expect(r.availability.PCMU.available).to.equal(true);
    expect(r.availability.PCMA.available).to.equal(true);
    for (const name of ['G722', 'opus']) {
      expect(r.availability[name].available, name).to.equal(false);
      expect(r.availability[name].reason, name).to.match(/native codec module did not load.*run bash scripts\/build-native\.sh/);
    }
    for (const [what, e] of [
      ['Opus', r.opus],
      ['G.722', r.g722],
      ['The resampler', r.resampler],
    ] as const) {
      expect(e.code, what).to.equal('ERR_CODEC_UNAVAILABLE');
      expect(e.message, what).to.match(new RegExp(`^${what} is not available: the native codec module did not load`));
    }
    expect(r.pcmu).to.be.within(950, 1050);
  });
});
