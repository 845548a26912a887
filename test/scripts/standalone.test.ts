// A repository that stands on its own: a copy of its files alone, in a folder with nothing beside it,
// finds everything it reads (the reference OpenAPI document above all), and no file of it cites a path
// outside it.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** The files a clone would hold: tracked ones and new ones not ignored (so uncommitted work counts too). */
function repositoryFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  return out.split('\0').filter((f) => f !== '' && fs.existsSync(path.join(ROOT, f)) && fs.statSync(path.join(ROOT, f)).isFile());
}

/** The repository's files copied into a fresh folder under the system's temporary one, with its node_modules linked. */
function cloneAlone(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'standalone-'));
  for (const f of repositoryFiles()) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, f), path.join(dir, f));
  }
  fs.symlinkSync(fs.realpathSync(path.join(ROOT, 'node_modules')), path.join(dir, 'node_modules'));
  return dir;
}

/** The environment without anything that points at a reference document elsewhere. */
function ownEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.REFERENCE_OPENAPI;
  return env;
}

describe('the repository stands on its own', function () {
  this.timeout(60_000);
  let clone = '';
  before(() => {
    clone = cloneAlone();
  });
  after(() => {
    if (clone) fs.rmSync(clone, { recursive: true, force: true });
  });

  it('the conformance suite reads the reference document from inside the copy', () => {
    const script = [
      "const ref = require('./test/conformance/reference');",
      'const r = new ref.Reference();',
      'process.stdout.write(JSON.stringify({ file: ref.referencePath(), operations: r.operations.length }));',
    ].join('\n');
    const out = execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { cwd: clone, env: ownEnv(), encoding: 'utf8' });
    const got = JSON.parse(out) as { file: string; operations: number };
    expect(path.relative(clone, got.file)).to.equal(path.join('reference', 'voipbin-openapi.json'));
    expect(got.operations).to.equal(410);
  });

  it('the reference licence and provenance travel with the document', () => {
    const licence = fs.readFileSync(path.join(clone, 'reference', 'LICENSE-voipbin-openapi.txt'), 'utf8');
    expect(licence)
      .to.match(/^MIT License/)
      .and.include('Copyright (c) 2024 Voipbin');
    const provenance = fs.readFileSync(path.join(clone, 'reference', 'PROVENANCE.md'), 'utf8');
    expect(provenance).to.include('voipbin-openapi.json').and.include('MIT');
    for (const f of ['extensions_id_provisioning_token.yaml', 'provisioning_extension.yaml']) {
      expect(fs.existsSync(path.join(clone, 'reference', 'voipbin-openapi-addendum', f)), f).to.equal(true);
    }
  });

  it('scripts/reference-client.ts generates the typed client from the copy', () => {
    execFileSync(process.execPath, ['--require', 'tsx/cjs', 'scripts/reference-client.ts'], { cwd: clone, env: ownEnv(), encoding: 'utf8' });
    const types = fs.readFileSync(path.join(clone, 'dist', 'reference-api', 'paths.d.ts'), 'utf8');
    expect(types).to.include('"/calls"');
  });

  it('no file cites a path outside the repository', () => {
    // spelt in pieces so that this file does not cite them itself
    const outside = new RegExp(['\\.\\./shared', ['', 'work', ''].join('/'), ['voipbin', 'notes'].join('-'), ['stack', 'notes'].join('-'), 'shared/(reference|design|spec)/'].join('|'));
    const hits: string[] = [];
    for (const f of repositoryFiles()) {
      if (!/\.(ts|js|md|sh|json|cfg|yaml|yml)$/.test(f) || f.startsWith('reference/')) continue;
      const lines = fs.readFileSync(path.join(ROOT, f), 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (outside.test(line)) hits.push(`${f}:${i + 1}: ${line.trim().slice(0, 120)}`);
      });
    }
    expect(hits, hits.join('\n')).to.deep.equal([]);
  });
});
