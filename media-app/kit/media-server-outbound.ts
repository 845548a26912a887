/**
 * MEDIA_SERVER's `listen` and `advertise` (media-server.ts parses the rest): where drachtio-fsmrf's
 * outbound-socket server listens (the switch connects back there for each channel) and what the switch
 * is told to dial (the X-esl-outbound header of fsmrf's INVITE). Loopback by default: a switch on another
 * host is accepted only with a listener it can reach. The values are never quoted in a problem (an
 * unencoded `&` in the password would make its tail look like one of these).
 */
import { classifyIp, ipLiteral, isLocalhostName } from '../../core/net/address';

export interface HostPort {
  /** an IP literal (listen), or an IP literal or a host name (advertise); IPv6 without brackets */
  host: string;
  /** listen: 0 is any free port; advertise: absent (0) is the listen port */
  port: number;
}

const LISTEN_FORM = 'listen=<ip>[:<port>] (e.g. listen=10.0.0.2:7000, listen=[fd00::2])';
const ADVERTISE_FORM = 'advertise=<ip or host>[:<port>] (e.g. advertise=10.0.0.2, advertise=media.internal:7000)';

/**
 * `listen` and `advertise` as given (absent: undefined), checked against each other and against where the
 * switch is (`switchLocal`: the event socket's host is loopback or localhost): the outbound fields of the
 * setting, or a problem.
 */
export function outboundSetting(listenRaw: string | undefined, advertiseRaw: string | undefined, switchLocal: boolean): { listen?: HostPort; advertise?: HostPort } | { problem: string } {
  const listen = listenRaw === undefined ? undefined : hostPort(listenRaw, false);
  if (listen === null) return { problem: `listen must be an IP address of this host with an optional port 0-65535: ${LISTEN_FORM}` };
  const advertise = advertiseRaw === undefined ? undefined : hostPort(advertiseRaw, true);
  if (advertise === null) return { problem: `advertise must be an IP address or a host name with an optional port 1-65535: ${ADVERTISE_FORM}` };
  const listenClass = listen ? classifyIp(listen.host) : 'loopback';
  if (listenClass === 'multicast' || listenClass === 'broadcast') return { problem: 'listen must be a unicast address of this host' };
  const wildcard = listenClass === 'unspecified';
  if (wildcard && !advertise) return { problem: `listen is a wildcard (every address): give ${ADVERTISE_FORM}, the switch cannot dial a wildcard` };
  if (advertise && ipLiteral(advertise.host) && classifyIp(ipLiteral(advertise.host)) === 'unspecified')
    return { problem: 'advertise must be an address the switch can dial, not a wildcard (0.0.0.0, ::)' };
  if (advertise?.port && !listen?.port) return { problem: 'advertise names a port but listen has none (any free port): give listen a fixed port too' };
  if (!switchLocal && listenClass === 'loopback')
    return {
      problem: `the switch is on another host, so it could not reach fsmrf's outbound-socket listener on loopback: set ${LISTEN_FORM} to an address the switch reaches (media-app/media-server/README.md)`,
    };
  if (!switchLocal && advertise && isLoopbackHost(advertise.host)) return { problem: 'advertise is a loopback address but the switch is on another host: it would dial itself' };
  return { ...(listen ? { listen } : {}), ...(advertise ? { advertise } : {}) };
}

/** `ip[:port]` / `[ipv6][:port]` (a name too when `names`), or null. */
function hostPort(raw: string, names: boolean): HostPort | null {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(raw) ?? /^([0-9a-fA-F:.]+)$/.exec(raw);
  if (!m) return null;
  const host = m[1] ?? m[2] ?? '';
  // a bare IPv6 (no brackets) has no port: the last group would be part of it
  const ip = ipLiteral(host);
  if (!ip && !(names && m[2] !== undefined && /^(?=.{1,253}$)[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*\.?$/.test(host))) return null;
  if (m[1] !== undefined && !ip.includes(':')) return null; // brackets are for IPv6 only
  if (host.includes('%')) return null; // no zone: fsmrf dials and listens without one
  const port = m[3] === undefined ? 0 : Number(m[3]);
  if (port > 65535 || (names && m[3] !== undefined && port === 0)) return null;
  return { host: ip || host, port };
}

/** A loopback literal or a name that always means this host. */
function isLoopbackHost(host: string): boolean {
  const ip = ipLiteral(host);
  return ip ? classifyIp(ip) === 'loopback' : isLocalhostName(host);
}
