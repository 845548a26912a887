// The set-up the conference-member suites share (a member's hold, a new HoldUrl while held, music on hold
// of a member, a room the switch ends): the platform on one media backend (test/xfer/support.ts
// startStack), a web server on loopback serving 1 s tone WAVs by name, parties placed into a room by
// POST /calls (each a sipp call whose RTP is a tone of its own: held-party.ts), and the prompt files
// media-app left on the directory shared with the switch (fsmrf). Everything ends after the suite.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { until, type sipp } from '../../testkit/media-app/harness';
import { sippParty } from '../../testkit/media-app/phones';
import { RtpParty } from '../../testkit/conference/party';
import { writeWav } from '../../media-engine/audio/wav';
import { useXferStack, type Stack } from '../xfer/support';
import { heldParty, type HeldDirection } from './held-party';

export interface RoomMember {
  /** the call's id */
  id: string;
  /** its RTP: a tone of its own, and what it hears */
  party: RtpParty;
  /** the sipp call */
  x: ReturnType<typeof sipp>;
}

export interface RoomMembers {
  /** the platform (set before the suite's tests) */
  readonly s: Stack;
  /** the URL of the served WAV `name` (one of `tones`, or one `route` answers) */
  url(name: string): string;
  /** A party (its RTP a tone of `freq`) placed into the room, taking one re-INVITE per direction in `reinvites`. */
  member(conferenceId: string, freq: number, reinvites?: HeldDirection[]): Promise<RoomMember>;
  /** The prompt files media-app put on the directory shared with the switch (fsmrf). */
  sharedFiles(): string[];
}

/** One second of `hz` as an 8 kHz WAV at `file`. */
export function toneFile(file: string, hz: number): void {
  const samples = new Int16Array(8000);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / 8000));
  writeWav(file, samples);
}

/**
 * The suite's platform on `backend` and its served tones: `tones` names each WAV (`/<name>.wav`, 1 s of its
 * Hz); `route` may answer a request first (true: answered), `send(name)` serving a tone as the server does.
 */
export function useRoomMembers(
  backend: 'embedded' | 'fsmrf',
  opts: { prefix: string; tones?: Record<string, number>; route?: (url: string, send: (name: string) => void) => boolean; after?: () => void },
): RoomMembers {
  let s: Stack | undefined;
  let web: http.Server | undefined;
  let base = '';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${opts.prefix}-`));
  // the stack's hooks first: it starts before the web server and is closed (every sipp killed, the parties closed) before it
  const parties = useXferStack((x) => (s = x), {}, { mediaServer: backend });

  before(async () => {
    for (const [name, hz] of Object.entries(opts.tones ?? {})) toneFile(path.join(dir, `${name}.wav`), hz);
    web = http.createServer((req, res) => {
      res.on('error', () => undefined);
      const send = (name: string) => res.writeHead(200, { 'Content-Type': 'audio/wav' }).end(fs.readFileSync(path.join(dir, `${name}.wav`)));
      if (opts.route?.(req.url ?? '', send)) return;
      const name = /^\/([a-z0-9-]+)\.wav$/.exec(req.url ?? '')?.[1];
      if (!name || !(name in (opts.tones ?? {}))) return void res.writeHead(404).end();
      send(name);
    });
    web.on('error', () => undefined);
    await new Promise<void>((r) => web!.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(web.address() as { port: number }).port}`;
  });
  after(async () => {
    opts.after?.();
    if (web) await new Promise<void>((r) => web!.close(() => r()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const platform = (): Stack => {
    if (!s) throw new Error('the platform starts before the suite');
    return s;
  };
  return {
    get s() {
      return platform();
    },
    url: (name) => `${base}/${name}.wav`,
    async member(conferenceId, freq, reinvites = []) {
      const stack = platform();
      const party = await RtpParty.open(freq);
      parties.push(party);
      const { port: px, x } = await sippParty(heldParty(party.port, reinvites));
      const res = await stack.api.post('/calls', {
        source: { type: 'tel', target: '+15550001111' },
        destinations: [{ type: 'sip', target: `m${freq}@127.0.0.1:${px}` }],
        actions: [{ type: 'conference_join', option: { conference_id: conferenceId } }],
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const id = res.body.calls[0].id as string;
      await until(async () => ((await stack.t.ctx.db('conferencecalls').where({ reference_id: id, status: 'joined' }).first()) ? true : null), 20_000, 'in the room');
      return { id, party, x };
    },
    sharedFiles() {
      // the harness's DATA_DIR (testkit/media-app/harness.ts), its switch's prompts directory
      const shared = path.join(os.tmpdir(), `media-app-test-${process.pid}`, 'switch-prompts');
      return fs.existsSync(shared) ? fs.readdirSync(shared).filter((f) => f.startsWith('p-')) : [];
    },
  };
}
