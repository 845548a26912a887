// The embedded engine's cache (converted prompts, fetched URLs, speech) is media-app's alone:
// $DATA_DIR/engine-cache, made 0700 (core/files/private-dir.ts), never a shared /tmp directory a
// local user could make first and plant audio in. A prompt the engine converts lands there; one that
// another user owns, or that group or others may write to, or a link, is refused at start, by name.
// The engine used as a library without a cacheDir takes <tmp>/media-engine-cache-<uid> under the same
// checks (media-engine/worker/source-resolver.ts defaultCacheDir).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import pino from 'pino';
import { wavFile } from '../../../core/audio/wav';
import { loadConfig } from '../../../core/config';
import { engineCacheDir } from '../../../core/data-dirs';
import { startMediaApp } from '../../../media-app/app';
import { loadMediaAppConfig } from '../../../media-app/kit/config';
import { defaultCacheDir } from '../../../media-engine/worker/source-resolver';
import { testDb, testDatabaseUrl } from '../../../testkit/db';
import { startFaultPlatform } from '../../reliability/faults/platform';

/** media-app started on `dataDir` with no sip-server to reach (the engine starts before it is looked for). */
async function startOn(dataDir: string): Promise<string> {
  const env = {
    DATABASE_URL: await testDatabaseUrl(),
    REDIS_URL: process.env.TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `tec${process.pid}_${randomBytes(4).toString('hex')}:`,
    DATA_DIR: dataDir,
    SIP_DOMAIN: 'sip.test',
    JWT_SECRET: 'e'.repeat(40),
    MEDIA_APP_NODE_ID: `ec-${process.pid}-${randomBytes(3).toString('hex')}`,
    MEDIA_WORKERS: '1',
    LOG_LEVEL: 'silent',
  } as NodeJS.ProcessEnv;
  const app = await startMediaApp({
    config: loadConfig(env, { persistSecret: false }),
    app: loadMediaAppConfig(env),
    logger: pino({ level: 'silent' }),
    db: await testDb(),
    connectTimeoutMs: 1000,
  }).then(
    (a) => a,
    (e: Error) => e,
  );
  if (app instanceof Error) return app.message;
  await app.stop();
  return 'started';
}

describe("media-app: the embedded engine's cache is media-app's own directory under DATA_DIR", () => {
  let root = '';
  beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-cache-'))));
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('$DATA_DIR/engine-cache, made 0700 whatever the umask: a prompt the engine converts is cached there', async function () {
    this.timeout(60_000);
    const old = process.umask(0o000);
    let p;
    try {
      p = await startFaultPlatform({ db: await testDb(), databaseUrl: await testDatabaseUrl(), env: { DATA_DIR: root } });
    } finally {
      process.umask(old);
    }
    try {
      const dir = engineCacheDir(root);
      expect(dir).to.equal(path.join(root, 'engine-cache'));
      expect(fs.statSync(dir).mode & 0o777).to.equal(0o700);
      // a 22.05 kHz prompt: converted to 8 kHz by sox, into the cache
      const prompt = path.join(root, 'prompt.wav');
      fs.writeFileSync(prompt, wavFile(new Int16Array(2205), 22050));
      const ep = await p.app.engine!.createEndpoint();
      try {
        await ep.play(prompt);
      } finally {
        await ep.destroy();
      }
      expect(fs.readdirSync(path.join(dir, 'audio')).filter((f) => f.startsWith('conv-local-'))).to.have.lengthOf(1);
    } finally {
      await p.close();
    }
  });

  it('one writable by group or others, a link, or owned by another user is refused at start, by name', async function () {
    this.timeout(30_000);
    const dir = path.join(root, 'engine-cache');
    fs.mkdirSync(dir, { mode: 0o700 });
    fs.chmodSync(dir, 0o770);
    expect(await startOn(root)).to.match(new RegExp(`^DATA_DIR: ${dir} is writable by group or others \\(mode 770\\)`));
    fs.rmdirSync(dir);
    fs.mkdirSync(path.join(root, 'elsewhere'), { mode: 0o700 });
    fs.symlinkSync(path.join(root, 'elsewhere'), dir);
    expect(await startOn(root)).to.match(new RegExp(`^DATA_DIR: ${dir} is not a directory`));
    fs.unlinkSync(dir);
    // another user's: made and given away when we are root
    const me = process.getuid!();
    if (me !== 0) this.skip();
    fs.mkdirSync(dir, { mode: 0o700 });
    fs.chownSync(dir, 65534, 65534);
    expect(await startOn(root)).to.match(new RegExp(`^DATA_DIR: ${dir} is owned by uid 65534, not by this process's user \\(uid 0\\)`));
  });

  it("the engine as a library, without a cacheDir: <tmp>/media-engine-cache-<uid>, 0700; another's or an open one refused, by name", () => {
    const uid = process.getuid!();
    const dir = defaultCacheDir(root);
    expect(dir).to.equal(path.join(root, `media-engine-cache-${uid}`));
    expect(fs.statSync(dir).mode & 0o777).to.equal(0o700);
    fs.chmodSync(dir, 0o777);
    expect(() => defaultCacheDir(root)).to.throw(new RegExp(`^media-engine cache: ${dir} is writable by group or others \\(mode 777\\)`));
    fs.rmdirSync(dir);
    fs.symlinkSync(root, dir);
    expect(() => defaultCacheDir(root)).to.throw(/is not a directory \(a link or a file\)/);
    fs.unlinkSync(dir);
    if (uid !== 0) return;
    fs.mkdirSync(dir, { mode: 0o700 });
    fs.chownSync(dir, 65534, 65534);
    expect(() => defaultCacheDir(root)).to.throw(new RegExp(`^media-engine cache: ${dir} is owned by uid 65534`));
  });
});
