/**
 * Everything checked before a media stream upgrade is answered (spec: Calls, "Media stream rules"):
 * credentials and account status as for /v1.0/ws (ws/guard.ts), manager level, a UUID id, a known encapsulation, the caller's own call
 * or conference, in status progressing, owned by a live node. Failures are ApiErrors, answered as
 * the error envelope with their HTTP status instead of 101.
 */
import type http from 'node:http';
import type { AppContext, AuthContext } from '../context';
import type { SocketGuard } from '../ws/guard';
import { ApiError, invalidId, permissionDenied, serviceUnavailable } from '../../core/errors';
import { isUuid } from '../../core/ids';
import { hasLevel } from '../../core/permissions';
import { callsRepo } from '../../core/repos/calls';
import { conferencesRepo } from '../../core/repos/conferences';
import { conferenceHost } from '../../core/conferences/commands';
import { ENCAPSULATIONS, isEncapsulation, type Encapsulation } from '../../core/streams/encapsulation';
import { relayAdKey, type RelayAdvert, type StreamTarget } from '../../core/streams/relay';
import { commandBus } from '../calls/bus';

export interface Admitted {
  auth: AuthContext;
  target: StreamTarget;
  id: string;
  encapsulation: StreamEncapsulation;
  relay: RelayAdvert;
  /** When the credential stops being valid (ms since epoch), if it expires. */
  expiresAtMs: number | null;
}

const PATH = /^\/v1\.0\/(calls|conferences)\/([^/]+)\/media_stream\/?$/;

/** The target of a media stream path, or null when the path is not ours. */
export function matchStreamPath(pathname: string): { target: StreamTarget; rawId: string } | null {
  const m = PATH.exec(pathname);
  if (!m) return null;
  return { target: m[1] === 'calls' ? 'call' : 'conference', rawId: decodeURIComponent(m[2]!) };
}

/** What GET .../media_stream takes: the PCM encapsulations, and twilio for a call (Twilio Media Streams). */
export type StreamEncapsulation = Encapsulation | 'twilio';

function encapsulationOf(q: URLSearchParams, target: StreamTarget): StreamEncapsulation {
  const v = q.get('encapsulation');
  const allowed: readonly string[] = target === 'call' ? [...ENCAPSULATIONS, 'twilio'] : ENCAPSULATIONS;
  if (v === null || v === '') {
    throw new ApiError('MISSING_REQUEST_PARAMETER', `query parameter encapsulation is required: one of ${allowed.join(', ')}`, { details: [{ field: 'encapsulation' }] });
  }
  if (v === 'twilio' && target === 'call') return v;
  if (!isEncapsulation(v)) {
    throw new ApiError('INVALID_REQUEST_PARAMETER', `unknown encapsulation ${JSON.stringify(v.slice(0, 40))}: use one of ${allowed.join(', ')}`, { details: [{ field: 'encapsulation' }] });
  }
  return v;
}

async function ownerOf(ctx: AppContext, auth: AuthContext, target: StreamTarget, id: string): Promise<string | null> {
  if (target === 'call') {
    const c = await callsRepo(ctx.db).getOwned(auth.customerId, id);
    if (!c) throw new ApiError('CALL_NOT_FOUND', 'call not found');
    if (c.status === 'hangup') throw new ApiError('CALL_ALREADY_HANGUP', 'the call has already ended');
    if (c.status !== 'progressing') throw new ApiError('CALL_STATE_INVALID', `the call is ${c.status}, not progressing`);
    return commandBus(ctx).callOwner(id);
  }
  const conf = await conferencesRepo(ctx.db).getOwned(auth.customerId, id);
  if (!conf) throw new ApiError('RESOURCE_NOT_FOUND', 'conference not found');
  if (conf.status !== 'progressing') throw new ApiError('STATE_INVALID', `the conference is ${conf.status}, not progressing`);
  return conferenceHost(ctx.redis, ctx.config.redisKeyPrefix, id);
}

export async function admit(ctx: AppContext, guard: SocketGuard, req: http.IncomingMessage, url: URL, target: StreamTarget, rawId: string): Promise<Admitted> {
  const { auth, expiresAtMs } = await guard.admit(req, url);
  if (auth.kind === 'direct') throw permissionDenied('a direct token may not open a media stream');
  if (!hasLevel(auth.permission, 'manager')) throw permissionDenied();
  if (!isUuid(rawId)) throw invalidId();
  const id = rawId.toLowerCase();
  const encapsulation = encapsulationOf(url.searchParams, target);
  const node = await ownerOf(ctx, auth, target, id);
  if (!node) throw serviceUnavailable(`no live media node owns this ${target}`);
  let relay: RelayAdvert | null = null;
  try {
    const raw = await ctx.redis.get(ctx.config.redisKeyPrefix + relayAdKey(node));
    relay = raw ? (JSON.parse(raw) as RelayAdvert) : null;
  } catch {
    relay = null;
  }
  if (!relay?.url || !relay.secret) throw serviceUnavailable(`the media node owning this ${target} serves no media streams`);
  return { auth, target, id, encapsulation, relay, expiresAtMs };
}
