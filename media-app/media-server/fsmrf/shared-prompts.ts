/**
 * The platform's prompt URLs as files the switch plays (a leg's play: endpoint.ts; a room's announcement
 * <Play>: conference-say.ts; README.md beside, "Conferences"): media-app
 * fetches each through its own egress policy (media-engine's prepareAudio, as the embedded engine
 * fetches a play URL: the host resolved and checked, the socket pinned to the checked address, each
 * redirect checked again, the same limits) and converts it to an 8 kHz 16-bit mono WAV in a directory
 * of its own under `dir`, the directory shared with the switch (MEDIA_SERVER_PROMPTS_DIR). The switch
 * is given that file's path, never the URL: it fetches nothing on a customer's behalf. The members who
 * hold a URL at the same time (an announcement to the room) share one fetch; the last to release it
 * removes its directory, file and all.
 *
 * The switch runs as a user of its own (FreeSWITCH's packages: `freeswitch`), so what is written here is
 * readable by others whatever media-app's umask: each prompt's directory 0755, its file 0644 (mkdtemp
 * makes 0700, the umask narrows the rest). Who else may read them is the shared directory's to say: the
 * operator's mode and group on MEDIA_SERVER_PROMPTS_DIR (freeswitch/README.md, "Shared files"); made
 * here when missing, it is 0755 too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { playUrlFailure, prepareAudio, readWav, type PrepareOptions } from '../../../media-engine';

/** A prompt held for playing: its WAV on the shared directory, until released. */
export interface HeldPrompt {
  /** the WAV's absolute path (what the switch is given) */
  path: string;
  durationMs: number;
  /** Played (or given up): the last holder removes the file. Idempotent. */
  release(): void;
}

interface Fetched {
  path: string;
  durationMs: number;
  remove(): void;
}

interface Holding {
  got: Promise<Fetched>;
  users: number;
}

export class SharedPrompts {
  readonly dir: string;
  private readonly held = new Map<string, Holding>();

  /** `dir`: shared with the switch (the switch reads what media-app writes there, at the same path); `egress`: media-app's policy. */
  constructor(
    dir: string,
    private readonly egress: PrepareOptions['egress'],
  ) {
    this.dir = path.resolve(dir);
  }

  /** The prompt at `url` (http or https only), fetched once for all who hold it meanwhile; rejects with the fetch's or conversion's error. */
  hold(url: string): Promise<HeldPrompt> {
    return this.holding(url, () => this.fetch(url));
  }

  /**
   * A file of the node's own (its music on hold, moh-source.ts) copied into the shared directory, where
   * the switch's room may read it (a room plays only from there), held and released as a URL's.
   */
  holdNodeFile(file: string): Promise<HeldPrompt> {
    return this.holding(`file:${path.resolve(file)}`, () => this.copy(file));
  }

  private async holding(key: string, load: () => Promise<Fetched>): Promise<HeldPrompt> {
    let h = this.held.get(key);
    if (!h) {
      h = { got: load(), users: 0 };
      this.held.set(key, h);
    }
    h.users++;
    const entry = h;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      if (--entry.users > 0) return;
      if (this.held.get(key) === entry) this.held.delete(key);
      entry.got.then(
        (f) => f.remove(),
        () => undefined,
      );
    };
    try {
      const f = await entry.got;
      return { path: f.path, durationMs: f.durationMs, release };
    } catch (err) {
      release();
      throw err;
    }
  }

  /** A directory of one prompt's own under `dir` (made, 0755, when missing), 0755 whatever the umask. */
  private async ownDir(): Promise<string> {
    if (await fs.promises.mkdir(this.dir, { recursive: true })) await fs.promises.chmod(this.dir, 0o755);
    const own = await fs.promises.mkdtemp(path.join(this.dir, 'p-'));
    await fs.promises.chmod(own, 0o755);
    return own;
  }

  private async copy(file: string): Promise<Fetched> {
    const own = await this.ownDir();
    const remove = () => fs.rmSync(own, { recursive: true, force: true });
    try {
      const to = path.join(own, path.basename(file));
      await fs.promises.copyFile(file, to);
      await fs.promises.chmod(to, 0o644);
      return { path: to, durationMs: readWav(to).info.durationMs, remove };
    } catch (err) {
      remove();
      throw err;
    }
  }

  private async fetch(url: string): Promise<Fetched> {
    // a local path would have the switch play one of its own files: only the platform's URLs are fetched
    if (!/^https?:\/\//i.test(url)) throw new Error(`a prompt for the switch must be an http(s) URL (got ${JSON.stringify(url.slice(0, 80))})`);
    const own = await this.ownDir();
    const remove = () => fs.rmSync(own, { recursive: true, force: true });
    try {
      const got = await prepareAudio(url, { cacheDir: own, egress: this.egress });
      await fs.promises.chmod(got.path, 0o644);
      return { path: got.path, durationMs: got.durationMs, remove };
    } catch (err) {
      remove();
      // as the engine's play tells it: the policy's refusal, or one generic reason (never the remote answer)
      throw playUrlFailure(err, url);
    }
  }
}
