// The fsmrf backend's prompt cache (media-app/media-server/fsmrf/shared-prompts.ts), with a real HTTP
// server on loopback that counts what it is asked: a <Play> of one URL for many members or announcements
// is fetched once and used again while valid, as the embedded engine's play (media-engine's fetch cache:
// no request within maxAgeMs, then If-None-Match / If-Modified-Since, a 304 costing no body) and as the
// response's Cache-Control says (max-age below maxAgeMs, no-cache: revalidated at each use); a changed
// file is fetched again. The copy the switch plays goes once its last holder released it, the cache
// stays media-app's. A <Say>'s speech is synthesised once (the engine's TTS cache). A shared directory
// whose path the switch's command parsing would split is refused when SharedPrompts is made; a node
// file's name is cleaned.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { wavFile } from '../../../core/audio/wav';
import { EgressPolicy, egressSettingsFromEnv } from '../../../core/net';
import { SharedPrompts, type SharedPromptsOptions } from '../../../media-app/media-server/fsmrf/shared-prompts';
import { cacheTrimmed } from '../../../media-engine/sources/cache-trim';
import { freshnessMs } from '../../../media-engine/sources/fetch-cache';
import { useServedFiles } from '../../../testkit/served-files';

const tone = (hz: number) =>
  wavFile(
    Int16Array.from({ length: 800 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / 8000))),
    8000,
  );

describe('media-app fsmrf: prompts fetched once and used again while valid', () => {
  const egress = new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }));
  const files = useServedFiles('prompt-cache-');
  const { served, asked } = files;
  let root = '';
  let base = '';
  beforeEach(() => {
    ({ root, base } = files);
  });

  const prompts = (o: Partial<SharedPromptsOptions> = {}) => new SharedPrompts(path.join(root, 'shared'), egress, { cacheDir: path.join(root, 'cache'), ...o });
  const shared = () => fs.readdirSync(path.join(root, 'shared'));
  /** One announcement's play: held, its copy read, released. */
  async function playOnce(p: SharedPrompts, url: string): Promise<Buffer> {
    const h = await p.hold(url);
    const bytes = fs.readFileSync(h.path);
    h.release();
    await new Promise((r) => setImmediate(r)); // the removal follows the release's settled fetch
    return bytes;
  }

  it('one URL for three announcements in a row: fetched once; each copy removed once released', async () => {
    served.set('/a.wav', { body: tone(440), etag: '"a1"' });
    const p = prompts();
    for (let i = 0; i < 3; i++) {
      expect(await playOnce(p, `${base}/a.wav`)).to.deep.equal(tone(440));
      expect(shared(), `announcement ${i + 1}: its copy removed`).to.deep.equal([]);
    }
    expect(asked).to.deep.equal([{ path: '/a.wav', status: 200 }]);
  });

  it('past maxAgeMs: revalidated with its ETag (a 304, no body); a changed file fetched again', async () => {
    served.set('/b.wav', { body: tone(440), etag: '"b1"' });
    const p = prompts({ maxAgeMs: 0 });
    await playOnce(p, `${base}/b.wav`);
    expect(await playOnce(p, `${base}/b.wav`)).to.deep.equal(tone(440));
    served.set('/b.wav', { body: tone(700), etag: '"b2"' });
    expect(await playOnce(p, `${base}/b.wav`), 'the new file').to.deep.equal(tone(700));
    expect(asked.map((a) => a.status)).to.deep.equal([200, 304, 200]);
  });

  it("the response's Cache-Control: no-cache revalidates at each use, max-age=0 too; a long max-age stays within maxAgeMs", async () => {
    served.set('/nc.wav', { body: tone(440), etag: '"n"', cacheControl: 'no-cache' });
    served.set('/ma.wav', { body: tone(440), etag: '"m"', cacheControl: 'public, max-age=0' });
    served.set('/long.wav', { body: tone(440), etag: '"l"', cacheControl: 'max-age=86400' });
    const p = prompts();
    for (const u of ['/nc.wav', '/ma.wav', '/long.wav']) for (let i = 0; i < 2; i++) await playOnce(p, base + u);
    expect(asked).to.deep.equal([
      { path: '/nc.wav', status: 200 },
      { path: '/nc.wav', status: 304 },
      { path: '/ma.wav', status: 200 },
      { path: '/ma.wav', status: 304 },
      { path: '/long.wav', status: 200 },
    ]);
    expect([freshnessMs('no-store'), freshnessMs('max-age=60'), freshnessMs(['private', 'max-age="5"']), freshnessMs('public'), freshnessMs(undefined)]).to.deep.equal([
      0,
      60_000,
      5000,
      undefined,
      undefined,
    ]);
  });

  it('a copy in the cache is not played once the policy refuses its host; a no-store prompt is never kept; the cache is bounded', async () => {
    served.set('/a.wav', { body: tone(440), etag: '"a"' });
    served.set('/ns.wav', { body: tone(500), etag: '"ns"', cacheControl: 'no-store' });
    served.set('/c.wav', { body: tone(600), etag: '"c"' });
    await playOnce(prompts(), `${base}/a.wav`);
    const tightened = new SharedPrompts(path.join(root, 'shared'), new EgressPolicy(egressSettingsFromEnv({})), { cacheDir: path.join(root, 'cache') });
    const refused = await tightened.hold(`${base}/a.wav`).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(refused, 'refused as a fetch is').to.match(/^http:\/\/127\.0\.0\.1:\d+\/a\.wav: .*loopback.*not allowed/);
    const audio = path.join(root, 'cache', 'audio');
    const p = prompts({ maxCacheEntries: 1 });
    expect(await playOnce(p, `${base}/ns.wav`)).to.deep.equal(tone(500));
    expect(await playOnce(p, `${base}/ns.wav`)).to.deep.equal(tone(500));
    expect(
      fs.readdirSync(audio).filter((f) => !f.startsWith('url-') && !f.startsWith('blob-')),
      'nothing of the no-store prompt left',
    ).to.deep.equal([]);
    await playOnce(p, `${base}/c.wav`);
    await cacheTrimmed(audio); // the trim runs in the background (media-engine/sources/cache-trim.ts)
    expect(fs.readdirSync(audio).sort(), 'one entry: a evicted for c').to.have.lengthOf(2);
    expect(asked.map((a) => a.path)).to.deep.equal(['/a.wav', '/ns.wav', '/ns.wav', '/c.wav']);
    expect(shared()).to.deep.equal([]);
  });

  it("a <Say>'s speech: synthesised once for two announcements of the same text and voice, each copy removed", async () => {
    const p = prompts();
    const a = await p.holdSpeech('welcome everybody', { language: 'en-US' });
    const first = fs.readFileSync(a.path);
    expect(first.length, 'speech').to.be.above(8000);
    a.release();
    const tts = path.join(root, 'cache', 'tts');
    const files = fs.readdirSync(tts).filter((f) => f.endsWith('.wav'));
    // a synthesis renames a new file over the old: the same inode is the same file (its mtime is its last use)
    const inodes = files.map((f) => fs.statSync(path.join(tts, f)).ino);
    const b = await p.holdSpeech('welcome everybody', { language: 'en-US' });
    expect(fs.readFileSync(b.path)).to.deep.equal(first);
    b.release();
    await new Promise((r) => setImmediate(r));
    expect(fs.readdirSync(tts).filter((f) => f.endsWith('.wav'))).to.deep.equal(files);
    expect(
      files.map((f) => fs.statSync(path.join(tts, f)).ino),
      'not synthesised again',
    ).to.deep.equal(inodes);
    expect(shared()).to.deep.equal([]);
  });

  it('the cache directory: made 0700 when missing; one owned by another user, writable by group or others, or not a directory is refused at start, by name', () => {
    const made = path.join(root, 'new', 'cache');
    const old = process.umask(0o000);
    try {
      expect(prompts({ cacheDir: made }).cacheDir).to.equal(made);
    } finally {
      process.umask(old);
    }
    expect(fs.statSync(made).mode & 0o777, 'made 0700 whatever the umask').to.equal(0o700);
    const open = path.join(root, 'open');
    fs.mkdirSync(open, { mode: 0o700 });
    fs.chmodSync(open, 0o777);
    expect(() => prompts({ cacheDir: open })).to.throw(/^MEDIA_SERVER_PROMPT_CACHE_DIR: .*\/open is writable by group or others \(mode 777\)/);
    fs.chmodSync(open, 0o770);
    expect(() => prompts({ cacheDir: open })).to.throw(/writable by group or others \(mode 770\)/);
    const link = path.join(root, 'link');
    fs.symlinkSync(made, link);
    expect(() => prompts({ cacheDir: link })).to.throw(/^MEDIA_SERVER_PROMPT_CACHE_DIR: .*\/link is not a directory/);
    // another user's: made and given away when we are root, else one of root's (/usr)
    const me = process.getuid!();
    const other = me === 0 ? 65534 : 0;
    const theirs = me === 0 ? path.join(root, 'theirs') : '/usr';
    if (me === 0) {
      fs.mkdirSync(theirs, { mode: 0o700 });
      fs.chownSync(theirs, other, other);
    }
    expect(() => prompts({ cacheDir: theirs })).to.throw(new RegExp(`^MEDIA_SERVER_PROMPT_CACHE_DIR: ${theirs} is owned by uid ${other}, not by this process's user \\(uid ${me}\\)`));
  });

  it("a shared directory the switch's command would split (a space, a quote, a backslash, !) is refused at start, by name; a node file's name is cleaned", async () => {
    for (const bad of ['with space', "it's", 'back\\slash', 'bang!'])
      expect(() => new SharedPrompts(path.join(root, bad), egress, { cacheDir: path.join(root, 'cache') }), bad).to.throw(
        /^MEDIA_SERVER_PROMPTS_DIR: .* which the switch's command parsing would split or unquote/,
      );
    const node = path.join(root, "hold music 'Jazz'.wav");
    fs.writeFileSync(node, tone(440));
    const h = await prompts().holdNodeFile(node);
    expect(path.basename(h.path)).to.equal('hold_music__Jazz_.wav');
    h.release();
  });
});
