// The directories under DATA_DIR more than one process uses, named once (core/data-dirs.ts): our switch's
// default recordings directory (ESL_RECORDINGS_DIR unset) is media-app's, where it writes every recording
// and control-api reads them, so a room on the fsmrf backend records where the platform looks with neither
// set; the switch's sounds default is media-app's MEDIA_SERVER_PROMPTS_DIR default. No source builds
// either path by hand: a second spelling is how the two drifted apart ($DATA_DIR/esl/recordings).
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { engineCacheDir, promptCacheDir, recordingsDir, switchPromptsDir } from '../../core/data-dirs';
import { loadEslConfig } from '../../esl/config';
import { loadMediaAppConfig, promptCachePath, promptsDir } from '../../media-app/kit/config';

const ROOT = path.resolve(__dirname, '../..');
const ROOMS = ['core', 'control-api', 'media-app', 'media-engine', 'esl', 'sip-server', 'scripts'];

/** Every .ts source of the platform's rooms (no tests, no node_modules). */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory() && e.name !== 'node_modules' && e.name !== 'build') out.push(...sources(p));
    else if (e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

describe('core/data-dirs: one recordings and one switch-prompts directory for every process', () => {
  const esl = (env: NodeJS.ProcessEnv) => loadEslConfig({ ESL_LISTEN: '8021', ESL_PASSWORD: 'pw', ...env })!.conferenceFiles;

  it("the switch's defaults are media-app's directories, for a relative and an absolute DATA_DIR", () => {
    for (const data of ['/srv/ov', '.data', 'rel/dir']) {
      expect(esl({ DATA_DIR: data }).recordings, `recordings under ${data}`).to.equal(recordingsDir(data));
      expect(esl({ DATA_DIR: data }).sounds, `prompts under ${data}`).to.equal(promptsDir({ mediaServerPromptsDir: undefined }, data));
      expect(recordingsDir(data)).to.equal(path.resolve(data, 'recordings'));
      expect(switchPromptsDir(data)).to.equal(path.resolve(data, 'switch-prompts'));
    }
    expect(esl({}).recordings, 'DATA_DIR unset: .data').to.equal(recordingsDir('.data'));
    expect(esl({ DATA_DIR: '/srv/ov', ESL_RECORDINGS_DIR: '/mnt/rec' }).recordings, 'as set').to.equal('/mnt/rec');
  });

  it("media-app's prompt cache: $DATA_DIR/prompt-cache, or MEDIA_SERVER_PROMPT_CACHE_DIR as set (absolute); its bound in MB", () => {
    for (const data of ['/srv/ov', '.data', 'rel/dir']) {
      expect(promptCachePath(loadMediaAppConfig({}), data)).to.equal(path.resolve(data, 'prompt-cache'));
      expect(promptCacheDir(data)).to.equal(path.resolve(data, 'prompt-cache'));
      expect(engineCacheDir(data), "the embedded engine's cache").to.equal(path.resolve(data, 'engine-cache'));
    }
    const set = loadMediaAppConfig({ MEDIA_SERVER_PROMPT_CACHE_DIR: 'rel/cache', MEDIA_SERVER_PROMPT_CACHE_MAX_MB: '5' });
    expect(promptCachePath(set, '/srv/ov')).to.equal(path.resolve('rel/cache'));
    expect(set.mediaServerPromptCacheMaxBytes).to.equal(5 * 1024 * 1024);
    expect(loadMediaAppConfig({}).mediaServerPromptCacheMaxBytes, 'default 1024 MB').to.equal(1024 * 1024 * 1024);
    expect(() => loadMediaAppConfig({ MEDIA_SERVER_PROMPT_CACHE_MAX_MB: '0' })).to.throw(/MEDIA_SERVER_PROMPT_CACHE_MAX_MB/);
  });

  it("no source joins a data directory with 'recordings', 'switch-prompts', 'prompt-cache' or 'engine-cache' itself", () => {
    const own = path.join(ROOT, 'core', 'data-dirs.ts');
    const by = /\b(?:path\.(?:join|resolve))\([^)]*[dD]ata(?:Dir|_DIR)?[^)]*['"](?:recordings|switch-prompts|prompt-cache|engine-cache)['"]/;
    const found = ROOMS.flatMap((r) => sources(path.join(ROOT, r)))
      .filter((f) => f !== own)
      .flatMap((f) =>
        fs
          .readFileSync(f, 'utf8')
          .split('\n')
          .map((l, i) => ({ at: `${path.relative(ROOT, f)}:${i + 1}`, l }))
          .filter(({ l }) => by.test(l)),
      )
      .map(({ at }) => at);
    expect(found).to.deep.equal([]);
  });
});
