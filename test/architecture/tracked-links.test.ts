// No symbolic link is tracked. A helper's worktree links node_modules, .data, dist and the native build
// to the main checkout's; one such link committed (it was: media-engine/native/build) replaces the real
// folder on every checkout that takes it, a link to itself on the main one. .gitignore names those
// paths without a trailing slash, so a link there is ignored as a folder is.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

describe('architecture: tracked files', () => {
  it('holds no symbolic link (git mode 120000)', () => {
    const staged = execFileSync('git', ['ls-files', '-s'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const links = staged
      .split('\n')
      .filter((l) => l.startsWith('120000 '))
      .map((l) => l.split('\t')[1]);
    expect(links).to.deep.equal([]);
  });

  it('ignores a link at each path a worktree links to the main checkout', () => {
    const paths = ['node_modules', '.data', 'dist', 'media-engine/native/build'];
    // --no-index: asks the rules alone, whether or not the path exists here
    const ignored = execFileSync('git', ['check-ignore', '--no-index', ...paths], { cwd: ROOT, encoding: 'utf8' })
      .trim()
      .split('\n');
    expect(ignored).to.deep.equal(paths);
  });
});
