/**
 * One inbound event-socket connection: `auth/request` first, then `auth <password>` (one refused
 * attempt closes it), then commands answered in the order they came, and the events it subscribed to.
 * The socket has its error handler before this runs (guardServer); nothing a client sends can throw
 * out of here: a frame that cannot be parsed is answered `-ERR command parse error.` and closes the
 * connection, as FreeSWITCH does.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type net from 'node:net';
import type { Channel } from './channel';
import { runCommand, type CommandHost } from './commands';
import type { EventName } from './events';
import { Subscriptions } from './subscriptions';
import { authRequest, commandReply, CommandReader, disconnectNotice, eventFrame, GOODBYE, lingerNotice, sessionDisconnectNotice, WireError, type CommandFrame, type EslEvent } from './wire';

/** The channel an outbound connection controls (sip-face.ts). */
export interface OutboundSession {
  readonly channel: Channel;
  hangup(cause: string, sendBye?: boolean): void;
  /** runs a dialplan application on the channel (sendmsg execute) */
  execute(app: string, arg: string, appUuid: string | undefined): void;
  /** a channel event to every connection subscribed to it */
  fire(name: EventName, own?: [string, string][]): void;
  /** uuid_break: stops what the channel plays; `all` also drops the applications queued behind it */
  breakMedia(all: boolean): Promise<void>;
}

/** What a connection needs of its server. */
export interface ListenerHost extends CommandHost {
  /** sha256 of the password (compared in constant time) */
  passwordDigest: Buffer;
  authTimeoutMs: number;
  /** unread bytes a connection may hold before it is dropped */
  maxUnreadBytes: number;
  /** a connection refused or dropped: a failed `auth` (counted against the address) or a client that stopped reading */
  refused(address: string, reason: string, counts?: boolean): void;
  /** the address has had too many refused attempts within the window */
  blocked(address: string): boolean;
  /** the connection closed */
  gone(l: Listener): void;
  /** a command's handler threw (a bug): the client got `-ERR`, the server reports it */
  failed(err: Error): void;
}

export class Listener {
  readonly subs = new Subscriptions();
  readonly address: string;
  authed = false;
  /** seconds to stay open after the channel hangs up (`linger`; -1: until the client exits), or null */
  linger: number | null = null;
  private closing = false;
  /** the linger phase's timer: closes the socket when the linger time is over */
  private lingerTimer: NodeJS.Timeout | null = null;
  private readonly reader = new CommandReader();
  private chain: Promise<void> = Promise.resolve();
  /** the pre-auth phase's timer: closes a connection that has not authenticated in time */
  private authTimer: NodeJS.Timeout | null;

  /** `session`: an outbound connection (we dialled it for that channel): no auth, `connect` first. */
  constructor(
    private readonly socket: net.Socket,
    private readonly host: ListenerHost,
    readonly session: OutboundSession | null = null,
  ) {
    this.address = socket.remoteAddress ?? '';
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.once('close', () => this.onClose());
    if (session) {
      this.authed = true;
      this.authTimer = null;
      return;
    }
    this.authTimer = setTimeout(() => this.close(), host.authTimeoutMs);
    this.send(authRequest());
  }

  /** The controlled channel hung up: linger (the notice, the socket stays for the last events) or goodbye. */
  channelGone(): void {
    if (this.closing || !this.session) return;
    if (this.linger === null) return this.close();
    this.send(lingerNotice(this.session.channel.uuid, this.session.channel.name, this.linger));
    if (this.linger >= 0) this.lingerTimer = setTimeout(() => this.close(), this.linger * 1000);
  }

  /** Sends `ev` if this connection subscribed to it (and its filters let it through). */
  deliver(ev: EslEvent): void {
    if (this.authed && !this.closing && this.subs.wants(ev)) this.send(eventFrame(ev, this.subs.format));
  }

  send(text: string): void {
    if (!this.socket.writable) return;
    this.socket.write(text);
    // a client that stops reading while events keep coming is dropped, as FreeSWITCH drops a listener
    // whose event queue overflows: its unread bytes would otherwise grow without bound
    if (this.socket.writableLength > this.host.maxUnreadBytes) {
      this.closing = true;
      this.clearAuthTimer();
      this.socket.destroy();
      this.host.refused(this.address, 'stopped reading its events', false);
    }
  }

  reply(text: string, extra?: [string, string][]): void {
    this.send(commandReply(text, extra));
  }

  /** Says goodbye (text/disconnect-notice) and closes; later frames are ignored. */
  close(message = GOODBYE): void {
    if (this.closing) return;
    this.closing = true;
    this.clearAuthTimer();
    if (this.socket.writable) {
      this.socket.write(this.session ? sessionDisconnectNotice(this.session.channel.uuid, message) : disconnectNotice(message));
      this.socket.end(() => this.socket.destroy());
    } else this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    if (this.closing) return;
    let frames: CommandFrame[];
    try {
      frames = this.reader.push(chunk);
    } catch (e) {
      if (!(e instanceof WireError)) this.host.failed(e instanceof Error ? e : new Error(String(e)));
      this.reply('-ERR command parse error.');
      return this.close();
    }
    // one command at a time, in order: each reply goes out before the next command runs
    for (const f of frames) this.chain = this.chain.then(() => this.handle(f));
  }

  private async handle(frame: CommandFrame): Promise<void> {
    if (this.closing) return;
    try {
      if (this.authed) await runCommand(this, frame, this.host);
      else this.beforeAuth(frame.command);
    } catch (e) {
      this.reply('-ERR internal error');
      this.host.failed(e instanceof Error ? e : new Error(String(e)));
    }
  }

  /** Before `auth`: only `auth`, `userauth` and `exit` mean anything. */
  private beforeAuth(command: string): void {
    const word = command.split(' ', 1)[0]!.toLowerCase();
    if (word === 'exit') {
      this.reply('+OK bye');
      return this.close();
    }
    if (word === 'auth') {
      // checked again at each attempt: connections opened together must not each get a guess
      if (this.host.blocked(this.address)) return this.refuse('too many refused auth attempts', false);
      if (this.passwordMatches(command.slice(5))) {
        this.authed = true;
        this.clearAuthTimer();
        return this.reply('+OK accepted');
      }
      return this.refuse('wrong password');
    }
    if (word === 'userauth') return this.refuse('userauth (no users are configured)');
    this.reply('-ERR command not found');
  }

  private refuse(reason: string, counts = true): void {
    this.host.refused(this.address, reason, counts);
    this.reply('-ERR invalid');
    this.close();
  }

  private passwordMatches(given: string): boolean {
    return timingSafeEqual(createHash('sha256').update(given, 'utf8').digest(), this.host.passwordDigest);
  }

  private clearAuthTimer(): void {
    if (this.authTimer) clearTimeout(this.authTimer);
    this.authTimer = null;
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.lingerTimer = null;
  }

  private onClose(): void {
    this.closing = true;
    this.clearAuthTimer();
    this.host.gone(this);
    // the socket application returned: the dialplan has nothing more, the channel hangs up
    this.session?.hangup('NORMAL_CLEARING');
  }
}
