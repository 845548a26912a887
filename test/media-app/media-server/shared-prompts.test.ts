// The directory media-app shares with the switch (media-app/media-server/fsmrf/shared-prompts.ts), on the
// real filesystem with a real HTTP server on loopback. The switch runs as a user of its own (FreeSWITCH's
// `freeswitch`): what media-app writes there must be readable by others whatever its umask (a prompt's
// directory 0755, its file 0644, the shared directory 0755 when media-app makes it). After a crash, the
// next start removes the prompt directories this host's dead processes left, and nothing else.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { wavFile } from '../../../core/audio/wav';
import { EgressPolicy, egressSettingsFromEnv } from '../../../core/net';
import { folderPrefix, SharedPrompts } from '../../../media-app/media-server/fsmrf/shared-prompts';

const mode = (p: string) => fs.statSync(p).mode & 0o777;

describe('media-app fsmrf: the directory shared with the switch', () => {
  const egress = new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }));
  const tone = wavFile(
    Int16Array.from({ length: 800 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000))),
    8000,
  );
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'audio/wav' }).end(tone));
  server.on('error', () => undefined);
  let root = '';
  before(() => new Promise<void>((r) => server.listen(0, '127.0.0.1', r)));
  beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'shared-prompts-'))));
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it("a fetched prompt and a copied node file are readable by the switch's user whatever media-app's umask: directories 0755, files 0644", async () => {
    const dir = path.join(root, 'switch-prompts');
    const node = path.join(root, 'moh.wav');
    fs.writeFileSync(node, tone);
    const prompts = new SharedPrompts(dir, egress, { cacheDir: path.join(root, 'cache') });
    const old = process.umask(0o077);
    try {
      const url = await prompts.hold(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}/tone.wav`);
      const copied = await prompts.holdNodeFile(node);
      expect(mode(dir), 'the shared directory media-app made').to.equal(0o755);
      for (const p of [url, copied]) {
        expect(path.dirname(path.dirname(p.path))).to.equal(dir);
        expect(mode(path.dirname(p.path)), `${p.path}'s directory`).to.equal(0o755);
        expect(mode(p.path), p.path).to.equal(0o644);
        p.release();
      }
      await new Promise((r) => setImmediate(r)); // the removal follows the release's settled fetch
      expect(fs.readdirSync(dir), 'released: removed').to.deep.equal([]);
    } finally {
      process.umask(old);
    }
  });

  it("a shared directory of the operator's keeps its mode (who may read is the operator's to say)", async () => {
    const dir = path.join(root, 'ops');
    fs.mkdirSync(dir, { mode: 0o750 });
    fs.chmodSync(dir, 0o750);
    const node = path.join(root, 'moh.wav');
    fs.writeFileSync(node, tone);
    const p = await new SharedPrompts(dir, egress, { cacheDir: path.join(root, 'cache') }).holdNodeFile(node);
    expect(mode(dir)).to.equal(0o750);
    expect(mode(path.dirname(p.path))).to.equal(0o755);
    p.release();
  });

  it("at start, removes only the prompt directories this host's dead processes left before it started", async () => {
    const dir = path.join(root, 'switch-prompts');
    fs.mkdirSync(dir);
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    const host = os.hostname();
    const startedAt = Date.now();
    const before = new Date(startedAt - 3_600_000);
    const make = (name: string, at: Date) => {
      fs.mkdirSync(path.join(dir, name));
      fs.writeFileSync(path.join(dir, name, 'prompt.wav'), tone);
      fs.utimesSync(path.join(dir, name), at, at);
      return name;
    };
    const stale = [make(`${folderPrefix(host, dead)}aB3xYz`, before), make(`${folderPrefix(host, process.pid)}oLd123`, before)];
    const kept = [
      make(`${folderPrefix(host, process.ppid)}live12`, before), // a running process's (another media-app on this host)
      make(`${folderPrefix('another-host', dead)}abcdef`, before), // another host's, sharing the directory
      make(`${folderPrefix(host, dead)}newer1`, new Date(startedAt + 1000)), // changed after this start
      make('p-abcdef', before), // not a name of ours
      make('recordings', before),
    ];
    fs.writeFileSync(path.join(dir, `${folderPrefix(host, dead)}file.wav`), tone);
    kept.push(`${folderPrefix(host, dead)}file.wav`);
    const removed = await new SharedPrompts(dir, egress, { cacheDir: path.join(root, 'cache') }).sweepStale(startedAt);
    expect(removed.sort()).to.deep.equal(stale.sort());
    expect(fs.readdirSync(dir).sort()).to.deep.equal(kept.sort());
  });

  it('at start with no shared directory yet: nothing to remove', async () => {
    expect(await new SharedPrompts(path.join(root, 'none'), egress, { cacheDir: path.join(root, 'cache') }).sweepStale()).to.deep.equal([]);
  });
});
