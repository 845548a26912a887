/**
 * The commands of an authenticated inbound connection, one handler each, with FreeSWITCH's replies
 * (mod_event_socket's parse_command; esl/README.md, "Commands"). A command word is matched whole and
 * without regard to case; anything else is `-ERR command not found`.
 */
import { randomUUID } from 'node:crypto';
import { runApi, splitApi, type ApiContext } from './api';
import type { EventFactory } from './events';
import type { Subscriptions } from './subscriptions';
import type { OutboundSession } from './listener';
import { apiResponse, connectReply, frameHeader, type CommandFrame, type EslEvent } from './wire';

/** The connection a command runs on (listener.ts). */
export interface CommandConn {
  readonly subs: Subscriptions;
  /** the channel an outbound connection controls; null on an inbound one */
  readonly session: OutboundSession | null;
  linger: number | null;
  send(text: string): void;
  reply(text: string, extra?: [string, string][]): void;
  close(): void;
}

/** What the commands need of the server. */
export interface CommandHost {
  api: ApiContext;
  events: EventFactory;
  /** an event for every connection that subscribed to it */
  publish(ev: EslEvent): void;
  /** the live channels by uuid */
  channels: Map<string, OutboundSession>;
  /** a handler's work that failed after its reply (a bug): reported */
  failed(err: Error): void;
}

type Handler = (conn: CommandConn, rest: string, frame: CommandFrame, host: CommandHost) => void | Promise<void>;

const words = (rest: string) => rest.split(' ').filter(Boolean);

const HANDLERS: Record<string, Handler> = {
  exit: (conn) => {
    conn.reply('+OK bye');
    conn.close();
  },
  event: (conn, rest) => conn.reply(conn.subs.event(words(rest))),
  nixevent: (conn, rest) => conn.reply(conn.subs.nixevent(words(rest))),
  noevents: (conn) => conn.reply(conn.subs.noevents()),
  filter: (conn, rest) => conn.reply(conn.subs.filter(rest)),
  myevents: (conn, rest, _f, host) => {
    if (conn.session) return conn.reply(conn.subs.myevents(conn.session.channel.uuid, words(rest)[0]));
    const [uuid, format] = words(rest);
    if (!uuid || !host.channels.has(uuid)) return conn.reply('-ERR invalid uuid');
    conn.reply(conn.subs.myevents(uuid, format));
  },
  // an inbound connection controls no channel (FreeSWITCH's answers on an inbound socket)
  linger: (conn, rest) => {
    if (!conn.session) return conn.reply('-ERR not controlling a session');
    // at most a day: a larger count would overflow setTimeout and close the socket at once
    const secs = /^\d+$/.test(rest.trim()) ? Math.min(Number(rest.trim()), 86_400) : -1;
    conn.linger = secs;
    conn.reply(secs >= 0 ? `+OK will linger ${secs} seconds` : '+OK will linger');
  },
  nolinger: (conn) => {
    if (!conn.session) return conn.reply('-ERR not controlling a session');
    conn.linger = null;
    conn.reply('+OK will not linger');
  },
  connect: (conn, _r, _f, host) => {
    if (!conn.session) return conn.reply('-ERR command not found');
    conn.send(connectReply(conn.session.channel.channelData(host.events), 'full'));
  },
  sendmsg: (conn, rest, frame, host) => {
    const uuid = rest.trim() || frameHeader(frame, 'session-id') || conn.session?.channel.uuid || '';
    const target = host.channels.get(uuid);
    if (!target) return conn.reply(`-ERR invalid session id [${uuid}]`);
    const command = frameHeader(frame, 'call-command')?.toLowerCase();
    conn.reply('+OK');
    if (command === 'hangup') target.hangup(frameHeader(frame, 'hangup-cause') ?? 'NORMAL_CLEARING');
    else if (command === 'execute') target.execute(frameHeader(frame, 'execute-app-name') ?? '', frameHeader(frame, 'execute-app-arg') ?? frame.body ?? '', frameHeader(frame, 'Event-UUID'));
  },
  // answered before the connection's next command runs (FreeSWITCH runs `api` in the listener's thread)
  api: async (conn, rest, _f, host) => {
    const [command, args] = splitApi(rest);
    conn.send(apiResponse(await runApi(command, args, host.api)));
  },
  bgapi: (conn, rest, frame, host) => {
    const [command, args] = splitApi(rest);
    const job = frameHeader(frame, 'Job-UUID') ?? randomUUID();
    conn.reply(`+OK Job-UUID: ${job}`, [['Job-UUID', job]]);
    const headers: [string, string][] = [
      ['Job-UUID', job],
      ['Job-Command', command],
    ];
    if (args) headers.push(['Job-Command-Arg', args]);
    // the job runs on its own (FreeSWITCH: a thread); the connection's next command does not wait for it
    return void runApi(command, args, host.api).then(
      (output) => host.publish(host.events.make('BACKGROUND_JOB', { file: 'esl/commands.ts', func: 'bgapi' }, headers, { body: output })),
      (e: unknown) => host.failed(e instanceof Error ? e : new Error(String(e))),
    );
  },
};

/** Runs one command of an authenticated connection; resolves once it is answered. */
export async function runCommand(conn: CommandConn, frame: CommandFrame, host: CommandHost): Promise<void> {
  const line = frame.command;
  const sp = line.indexOf(' ');
  const word = (sp < 0 ? line : line.slice(0, sp)).toLowerCase();
  const rest = sp < 0 ? '' : line.slice(sp + 1);
  const handler = Object.hasOwn(HANDLERS, word) ? HANDLERS[word] : undefined;
  if (!handler) return conn.reply('-ERR command not found');
  await handler(conn, rest, frame, host);
}
