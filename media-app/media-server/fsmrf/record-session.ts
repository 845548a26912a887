/**
 * startRecord on the fsmrf backend (README.md beside): the switch's `record_session <path> [+<limit>]`
 * (fsmrf's recordSession), which returns once its media bug is armed and records until
 * `uuid_record <uuid> stop <path|all>`, its limit or the hang-up. The stop is that API command
 * (mod_commands), not the `stop_record_session` application: the switch runs a sendmsg'd application
 * only after the running one (FreeSWITCH with event-lock, ours too), so it waited behind a playing
 * prompt and the file went on recording it. The end is the channel's RECORD_STOP
 * for that path (subscribed on the leg's own channel connection, fsmrf's Endpoint#conn; fsmrf does not
 * subscribe to it itself); the length then comes from the record_* variables (uuid_dump through
 * getChannelVariables). A leg that ends first ends the recording with what is known.
 */
import type { Endpoint as FsEndpoint } from 'drachtio-fsmrf';
import type { RecordOptions, RecordResult, Recording } from '../../../media-engine';
import { apiBody, replyText } from './esl-arg';
import { onChannelEvent } from './leg-socket';

/** The session recordings running on one leg, by path. */
export class SessionRecordings {
  private readonly running = new Map<string, { finish: (r: RecordResult | null) => void; stopped: boolean; limit: number }>();
  private subscribed = false;

  constructor(private readonly fs: FsEndpoint) {}

  get size(): number {
    return this.running.size;
  }

  /** record_session on `path` (`duration`: its limit, s); resolves once the switch armed it. */
  async start(path: string, opts: RecordOptions): Promise<Recording> {
    if (this.running.has(path)) throw new Error(`startRecord: ${path} is already being recorded`);
    const limit = opts.duration && opts.duration > 0 ? Math.ceil(opts.duration) : 0;
    let finish!: (r: RecordResult | null) => void;
    const ended = new Promise<RecordResult | null>((resolve) => (finish = resolve));
    const entry = { finish, stopped: false, limit };
    const off = onChannelEvent(
      this.fs,
      'RECORD_STOP',
      (evt) => {
        if (evt.getHeader('Record-File-Path') !== path) return;
        void this.result(path, entry).then(finish, () => finish(null));
      },
      { subscribe: !this.subscribed },
    );
    if (!off) throw new Error('endpoint no longer active');
    this.subscribed = true;
    this.running.set(path, entry);
    const done = ended.then((r) => {
      off();
      this.running.delete(path);
      return r ?? { path, reason: 'hangup' as const, terminatorUsed: null, recordSeconds: 0, recordMilliseconds: 0, rate: 8000, files: [] };
    });
    try {
      await this.fs.recordSession(path, ...(limit ? [`+${limit}`] : []));
    } catch (err) {
      finish(null);
      await done;
      throw err;
    }
    return { path, rate: 8000, done };
  }

  /**
   * uuid_record stop for `path` (every one without it): applied at once, whatever plays; each `done`
   * settles with its RECORD_STOP. `-ERR Cannot stop record session!` is a recording that ended meanwhile
   * (its limit; its RECORD_STOP settles it); any other answer rejects.
   */
  async stop(path?: string): Promise<void> {
    const which = path === undefined ? [...this.running.keys()] : this.running.has(path) ? [path] : [];
    if (!which.length) return;
    for (const p of which) this.running.get(p)!.stopped = true;
    const body = apiBody(await this.fs.api('uuid_record', `${this.fs.uuid} stop ${path ?? 'all'}`));
    if (!body.startsWith('+OK') && !body.startsWith('-ERR Cannot stop record session')) throw new Error(`uuid_record stop: ${replyText(body) || 'no answer'}`);
  }

  /** The leg ended: what still records ends with it. */
  hangup(): void {
    for (const e of this.running.values()) e.finish(null);
  }

  /** The record_* variables the switch set before RECORD_STOP. */
  private async result(path: string, how: { stopped: boolean; limit: number }): Promise<RecordResult> {
    const vars = await this.fs.getChannelVariables();
    const ms = Number(vars['variable_record_ms'] ?? 0) || 0;
    // stopped by us, else its limit reached (within a frame or so), else the channel's end
    const reason: RecordResult['reason'] = how.stopped ? 'stopped' : how.limit && ms >= how.limit * 1000 - 200 ? 'duration' : 'hangup';
    return { path, reason, terminatorUsed: null, recordSeconds: Math.floor(ms / 1000), recordMilliseconds: ms, rate: 8000, files: [] };
  }
}
