/**
 * The media backend over drachtio-fsmrf (README.md beside): one fsmrf MediaServer connected to a
 * FreeSWITCH event socket (MEDIA_SERVER=freeswitch://host:port?password=…), an fsmrf Endpoint per call
 * leg made through fsmrf's createEndpoint on media-app's own Srf (endpoint.ts: the CallEndpoint over
 * it), a conference room per conference (createMix: conference.ts, the switch's own conference). What
 * the backend cannot do (the engine's conference mixer, the AI voice taps, echo cancellation, RTP
 * capture) throws MediaBackendUnsupported naming the backend: never a silent no-op.
 */
import type { MediaServer as FsMediaServer } from 'drachtio-fsmrf';
import type { Conference } from '../../../media-engine';
import { MEDIA_TIMEOUT_HEADER } from '../../../core/sip/media-timeout-header';
import { MediaBackendUnsupported, type CallEndpointOptions, type MediaPort } from '../port';
import { FsmrfCallEndpoint } from './endpoint';
import { AI_TALK_FEATURE } from '../endpoint';
import net from 'node:net';
import { connectSwitch, type ConnectOptions } from './connect';
import { ForkTapServer, type ForkTapSetting } from './fork-tap';
import { REAL_TIMERS, SwitchLink, type LinkLog, type LinkTimers, type ReconnectDelays } from './switch-link';
import type { MixPort } from '../conference';
import { FsmrfMix } from './conference';
import type { SharedPrompts } from './shared-prompts';

export { FsmrfCallEndpoint } from './endpoint';

/** The audio fork server's defaults (MEDIA_SERVER_TAP_LISTEN, MEDIA_SERVER_TAP_CONNECT_TIMEOUT_MS). */
export const DEFAULT_TAPS: ForkTapSetting = { host: '127.0.0.1', port: 0, connectTimeoutMs: 5000 };

export interface FsmrfSetting {
  host: string;
  port: number;
  password: string;
  /** MEDIA_SERVER's listen: where fsmrf's outbound-socket server listens (absent: FsmrfConnectOptions.listenAddress, else 127.0.0.1, any port) */
  listen?: { host: string; port: number };
  /** MEDIA_SERVER's advertise: what the switch is told to dial (absent: the listen address) */
  advertise?: { host: string; port: number };
}

/** Why a new leg is refused while the switch is lost (app.ts answers a new INVITE 503 before it gets here). */
export class MediaServerDown extends Error {
  constructor() {
    super('the media server (MEDIA_SERVER) is unreachable: reconnecting');
    this.name = 'MediaServerDown';
  }
}

/** What connect() needs beside the address. */
export interface FsmrfConnectOptions {
  connectTimeoutMs: number;
  listenAddress?: string;
  /** the reconnect after a lost event socket (switch-link.ts); defaults 500 ms doubling to 30 s */
  reconnect?: ReconnectDelays;
  /** media-app's logger: the loss, the retries, the return */
  log?: LinkLog;
  /** where the reconnect's, the rooms' recording-duration and the legs' end timers are armed (default the process's; tests pass virtual timers) */
  timers?: LinkTimers;
  /** where the audio fork server listens (default loopback, port 0, 5 s for the switch to connect) */
  taps?: ForkTapSetting;
  /**
   * MEDIA_INACTIVITY_TIMEOUT_MS: every leg's INVITE carries it (X-Media-Timeout, set as `media_timeout`
   * by the mrf dialplan before its answer), as FreeSWITCH reads it only when the leg's RTP is activated;
   * 0 or unset: off
   */
  mediaTimeoutMs?: number;
}

/**
 * Where fsmrf's outbound-socket server listens and what it advertises (connect.ts ConnectOptions). A
 * `listen` that is one address (not a wildcard) is also the event socket's source when the switch's host
 * is an IP of the same family (a name could resolve to the other family, where binding would fail).
 */
function outboundOptions(setting: FsmrfSetting, listenAddress = '127.0.0.1'): Pick<ConnectOptions, 'listenAddress' | 'listenPort' | 'advertise' | 'localAddress'> {
  const listen = setting.listen;
  if (!listen) return { listenAddress, ...(setting.advertise ? { advertise: setting.advertise } : {}) };
  const family = net.isIP(listen.host);
  const bind = family !== 0 && !/^(0\.0\.0\.0|::)$/.test(listen.host) && net.isIP(setting.host) === family;
  return { listenAddress: listen.host, listenPort: listen.port, ...(setting.advertise ? { advertise: setting.advertise } : {}), ...(bind ? { localAddress: listen.host } : {}) };
}

const SILENT: LinkLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** The connection to the switch and the endpoints made on it. */
export class FsmrfBackend implements MediaPort, MixPort {
  readonly name = 'fsmrf' as const;

  /** where an http(s) prompt (a leg's play, a room's announcement) is fetched for the switch (promptsIn) */
  private prompts: SharedPrompts | null = null;

  /** the legs and rooms live on the switch: ended when it is lost */
  private readonly live = new Set<FsmrfCallEndpoint>();
  private readonly rooms = new Set<FsmrfMix>();

  private constructor(
    readonly link: SwitchLink,
    /** where the switch's audio forks connect (fork-tap.ts), listening from the first fork on */
    readonly taps: ForkTapServer,
    /** where a room's recording-duration timer is armed (conference.ts) */
    private readonly timers: LinkTimers,
    /** the media timeout every leg is made with (ms, 0: none): FsmrfConnectOptions.mediaTimeoutMs */
    private readonly mediaTimeoutMs: number,
  ) {
    if (!Number.isInteger(mediaTimeoutMs) || mediaTimeoutMs < 0) throw new Error(`fsmrf backend: invalid media timeout: ${mediaTimeoutMs}`);
    link.on('down', (reason) => {
      for (const ep of [...this.live]) ep.serverLost(`the media server connection was lost (${reason})`);
      for (const mix of [...this.rooms]) mix.serverLost();
    });
  }

  private get ms(): FsMediaServer {
    return this.link.ms;
  }

  /** false while the switch is lost (reconnecting) and after close(): new legs are refused */
  get up(): boolean {
    return this.link.state === 'up';
  }

  /** The directory shared with the switch where media-app fetches http(s) prompts through its egress policy (app.ts); without it such prompts are refused. */
  promptsIn(prompts: SharedPrompts): this {
    this.prompts = prompts;
    return this;
  }

  /**
   * Connects fsmrf to the event socket within `connectTimeoutMs` (connect.ts; rejects with a
   * SwitchConnectError). `srf`: media-app's drachtio-srf (fsmrf sends its INVITEs to the switch's SIP
   * profile through it); where fsmrf's outbound-socket server listens: the setting's `listen` (the
   * event socket then connected from that address unless it is a wildcard), else `listenAddress` (loopback);
   * `taps`: where the audio fork server listens (default loopback, port 0, 5 s for the switch to connect).
   */
  static async connect(srf: unknown, setting: FsmrfSetting, opts: FsmrfConnectOptions): Promise<FsmrfBackend> {
    const to = { host: setting.host, port: setting.port, password: setting.password };
    const connect = { timeoutMs: opts.connectTimeoutMs, ...outboundOptions(setting, opts.listenAddress), timers: opts.timers };
    const ms = await connectSwitch(srf, to, connect);
    const link = new SwitchLink(ms, srf, to, { ...connect, reconnect: opts.reconnect ?? { minMs: 500, maxMs: 30_000 }, log: opts.log ?? SILENT });
    return new FsmrfBackend(link, new ForkTapServer(opts.taps ?? DEFAULT_TAPS, opts.log ?? SILENT), opts.timers ?? REAL_TIMERS, opts.mediaTimeoutMs ?? 0);
  }

  /**
   * A leg's endpoint: the switch answers `remoteSdp` (an inbound offer), or offers when it is absent
   * (modify() takes the answer). `codecs` goes to the switch; `near` is the engine's worker placement
   * (one switch holds every channel); `inbandDtmf` starts the switch's detector (start_dtmf); a
   * `direction` other than sendrecv is refused.
   */
  async createEndpoint(opts: CallEndpointOptions = {}): Promise<FsmrfCallEndpoint> {
    if (opts.direction && opts.direction !== 'sendrecv') throw new MediaBackendUnsupported('fsmrf', `an endpoint made ${opts.direction}`);
    if (!this.up) throw new MediaServerDown();
    // the media timeout goes on the INVITE: the switch reads it when it activates the leg's RTP, never later
    const headers: Record<string, string> = this.mediaTimeoutMs > 0 ? { [MEDIA_TIMEOUT_HEADER]: String(this.mediaTimeoutMs) } : {};
    const fs = await this.ms.createEndpoint({ remoteSdp: opts.remoteSdp ?? null, headers, ...(opts.codecs?.length ? { codecs: opts.codecs } : {}) });
    const ep = new FsmrfCallEndpoint(fs, this.prompts, this.taps, this.mediaTimeoutMs, this.timers);
    // the switch lost while it answered: the 'down' that ended the live legs did not see this one
    if (!this.up) {
      ep.serverLost('the media server connection was lost while the leg was made');
      throw new MediaServerDown();
    }
    this.live.add(ep);
    ep.once('destroy', () => this.live.delete(ep));
    if (opts.inbandDtmf) {
      try {
        await fs.execute('start_dtmf');
      } catch (err) {
        await ep.destroy().catch(() => undefined);
        throw err;
      }
    }
    return ep;
  }

  /** A conference room on the switch (conference.ts: fsmrf's Conference): what media-app/conference hosts a room in. */
  async createMix(name: string): Promise<FsmrfMix> {
    if (!this.up) throw new MediaServerDown();
    const mix = await FsmrfMix.create(this.ms, name, this.timers, this.prompts);
    if (!this.up) {
      mix.serverLost();
      throw new MediaServerDown();
    }
    this.rooms.add(mix);
    mix.once('destroy', () => this.rooms.delete(mix));
    return mix;
  }

  /** The embedded engine's conference mixer (pbx supervision's whisper mix): refused; rooms use createMix. */
  createConference(): Promise<Conference> {
    return Promise.reject(new MediaBackendUnsupported('fsmrf', "the embedded engine's conference mixer (supervision: listen, whisper, barge)"));
  }

  /** No engine conference lives here. */
  getConference(): Conference | undefined {
    return undefined;
  }

  /** The AI voice path needs the embedded engine's taps: a flow's ai_talk fails with this reason here. */
  refuseAiTalk(): MediaBackendUnsupported {
    return new MediaBackendUnsupported('fsmrf', AI_TALK_FEATURE);
  }

  /** For good: no reconnect after (the link's timer cancelled). */
  close(): void {
    void this.taps.close();
    this.link.close();
  }
}
