/**
 * `uuid_audio_fork` (jambonz's mod_audio_fork, which drachtio-fsmrf's forkAudio* methods drive): the
 * API command, and the forks ("bugs") of each channel by name. Owns the channel → bugs relation: a
 * bug is added by `start`, and leaves it when it ends (stop, connection failed or dropped) or when
 * the channel's endpoint goes (hang-up). Answers as fork_function does: `+OK Success`,
 * `-ERR Operation Failed`, `-USAGE: …` (esl/README.md, "Audio fork").
 */
import type { EgressPolicy } from '../../core/net';
import type { Channel } from '../channel';
import type { EventFactory } from '../events';
import type { EslEvent } from '../wire';
import { FORK_SYNTAX, parseForkCommand, wsUrl, type ForkStart } from './args';
import { ForkSession } from './session';

/** What the forks need of the switch. */
export interface AudioForksHost {
  /** the live channels by uuid (EslServer.channels) */
  readonly channels: ReadonlyMap<string, { readonly channel: Channel }>;
  readonly events: EventFactory;
  publish(ev: EslEvent): void;
  readonly egress: EgressPolicy;
  /** the WebSocket's opening handshake limit, ms */
  readonly connectTimeoutMs: number;
  /** a bug of ours, reported (EslServer's 'failed') */
  failed(err: Error): void;
}

const OK = '+OK Success\n';
const FAILED = '-ERR Operation Failed\n';

export class AudioForks {
  /** channel uuid → bug name → fork */
  private readonly byChannel = new Map<string, Map<string, ForkSession>>();

  constructor(private readonly host: AudioForksHost) {}

  /** The bugs of a channel now (tests and `uuid_dump` may read them). */
  bugs(uuid: string): string[] {
    return [...(this.byChannel.get(uuid)?.keys() ?? [])];
  }

  /** `uuid_audio_fork <args>`: its output. */
  command(args: string): string {
    const c = parseForkCommand(args);
    if ('error' in c) return c.error === 'usage' ? `-USAGE: ${FORK_SYNTAX}\n` : FAILED;
    const channel = this.host.channels.get(c.uuid)?.channel;
    if (!channel) return FAILED; // "Error locating session"
    if (c.op === 'start') return this.start(channel, c.start);
    const fork = this.byChannel.get(channel.uuid)?.get(c.bug);
    if (!fork) return FAILED; // "no bug"
    if (c.op === 'stop') fork.stop(c.text);
    else if (c.op === 'send_text') fork.sendText(c.text);
    else if (c.op === 'pause' || c.op === 'resume') fork.pause(c.op === 'pause');
    else if (c.op === 'graceful-shutdown') fork.gracefulShutdown();
    else if (c.op === 'stop_play') fork.stopPlay();
    return OK;
  }

  /**
   * A new bug: refused at once when the name is taken or the URL is not a ws(s) URL the egress policy
   * may reach by its literal host; a host name is resolved and checked by the fork itself, whose
   * refusal is then a connect_failed event (FreeSWITCH connects after answering +OK too).
   */
  private start(channel: Channel, req: ForkStart): string {
    const url = wsUrl(req.url);
    if (!url || url.username || url.password) return FAILED;
    try {
      this.host.egress.assertHost(url.hostname, 'the audio fork URL');
    } catch (e) {
      return `-ERR Operation Failed: ${(e as Error).message}\n`;
    }
    let bugs = this.byChannel.get(channel.uuid);
    if (bugs?.has(req.bug)) return FAILED; // "bug already attached"
    if (!bugs) bugs = this.track(channel);
    const fork: ForkSession = new ForkSession(
      {
        endpoint: channel.endpoint,
        channelUuid: channel.uuid,
        egress: this.host.egress,
        connectTimeoutMs: this.host.connectTimeoutMs,
        emit: (name, body) => this.emit(channel, name, body),
        ended: () => this.forget(channel, req.bug, fork),
        failed: (err) => this.host.failed(err),
      },
      req,
      url,
    );
    bugs.set(req.bug, fork);
    void fork.start().catch((e: unknown) => this.host.failed(e instanceof Error ? e : new Error(String(e))));
    return OK;
  }

  /** The channel's bug list, ended with its endpoint (the hang-up): each fork closes without an event. */
  private track(channel: Channel): Map<string, ForkSession> {
    const bugs = new Map<string, ForkSession>();
    this.byChannel.set(channel.uuid, bugs);
    const gone = () => {
      for (const f of [...bugs.values()]) f.stop(null);
      this.byChannel.delete(channel.uuid);
    };
    channel.endpoint.once('destroy', gone);
    return bugs;
  }

  private forget(channel: Channel, bug: string, fork: ForkSession): void {
    const bugs = this.byChannel.get(channel.uuid);
    if (bugs?.get(bug) === fork) bugs.delete(bug);
  }

  /** CUSTOM mod_audio_fork::<name> with the channel's headers (switch_channel_event_set_data), the body if any. */
  private emit(channel: Channel, name: string, body?: string): void {
    this.host.publish(channel.event(this.host.events, 'CUSTOM', [], { subclass: `mod_audio_fork::${name}`, body }));
  }
}
