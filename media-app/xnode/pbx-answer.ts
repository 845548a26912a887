/**
 * The holding side of a PBX leg (pbx-leg.ts is the asking side): the leg's INVITE answered with an
 * endpoint near the call it asks for, as a side of that call's Bridge. It ends with the asking node's
 * BYE, our hangup (a BYE, not waited for), or the asking call's node stopping its heartbeat (checked
 * every second: a lost node never sends its BYE).
 */
import type { Logger } from 'pino';
import { callNodeKey } from '../../core/commands/contracts';
import type { CallEndpoint } from '../media-server/endpoint';
import type { BridgeParty } from '../call/bridge';
import type { CallDeps } from '../call/deps';
import { createCallEndpoint } from '../call/endpoint';
import type { SrfDialog, SrfRequest, SrfResponse } from '../kit/srf';
import { parseSipUri } from '../kit/sip-uri';
import { nodeAlive } from './address';
import { PBX_LEG_HEADER, PBX_LEG_USER_PREFIX, type PbxLegClaims } from './pbx-token';

/** True for an INVITE that claims to be a PBX leg (its Request-URI or its header says so). */
export function isPbxLeg(req: SrfRequest): boolean {
  return req.get(PBX_LEG_HEADER) !== undefined || (parseSipUri(req.uri)?.user ?? '').toLowerCase().startsWith(PBX_LEG_USER_PREFIX);
}

/** The asking call's node is alive (call-node:<call> names it and its heartbeat runs). */
async function askerAlive(deps: Pick<CallDeps, 'redis' | 'config'>, callId: string): Promise<boolean> {
  const node = await deps.redis.get(deps.config.redisKeyPrefix + callNodeKey(callId));
  return !!node && (await nodeAlive(deps.redis, deps.config.redisKeyPrefix, node));
}

export class AskerLeg implements BridgeParty {
  readonly done: Promise<string>;
  private resolveDone!: (why: string) => void;
  private over = false;
  private watch: NodeJS.Timeout | null = null;

  constructor(
    readonly id: string,
    readonly endpoint: CallEndpoint,
    private readonly dialog: SrfDialog,
  ) {
    this.done = new Promise((r) => (this.resolveDone = r));
  }

  get isEnded(): boolean {
    return this.over;
  }

  /** Ends the leg for `why`; `bye`: the dialog is still up here and gets a BYE. Idempotent. */
  end(why: string, bye: boolean): void {
    if (this.over) return;
    this.over = true;
    if (this.watch) clearInterval(this.watch);
    if (bye) void this.dialog.destroy().catch(() => undefined);
    void this.endpoint.destroy().catch(() => undefined);
    this.resolveDone(why);
  }

  hangup(why = 'hangup'): Promise<void> {
    this.end(why, true);
    return Promise.resolve();
  }

  /** Watches the asking call's node; a lapsed heartbeat ends the leg. */
  watchAsker(deps: Pick<CallDeps, 'redis' | 'config'>, callId: string, logger: Logger, everyMs = 1000): void {
    this.watch = setInterval(
      () =>
        void askerAlive(deps, callId).then(
          (alive) => {
            if (alive || this.over) return;
            logger.warn({ leg: this.id, call: callId }, "PBX leg: the asking call's node stopped beating");
            this.end('asker_lost', true);
          },
          () => undefined,
        ),
      everyMs,
    );
  }
}

/**
 * Answers the leg's INVITE with an endpoint near `near` (the call asked for); null when it could not
 * (the INVITE got its refusal: 488 no usable offer, 503 no media).
 */
export async function answerPbxLeg(deps: CallDeps, req: SrfRequest, res: SrfResponse, claims: PbxLegClaims, near: CallEndpoint | null, watchMs?: number): Promise<AskerLeg | null> {
  if (!req.body) return (res.send(488), null);
  const made = await createCallEndpoint(deps, { remoteSdp: req.body, ...(near ? { near } : {}) });
  if ('error' in made) {
    deps.logger.warn({ err: made.error, kind: claims.kind, subject: claims.subjectId }, 'PBX leg: no media endpoint');
    return (res.send(503), null);
  }
  let dialog: SrfDialog;
  try {
    dialog = await deps.srf.createUAS(req, res, { localSdp: made.endpoint.local.sdp });
  } catch (err) {
    await made.endpoint.destroy().catch(() => undefined);
    deps.logger.info({ err: (err as Error).message, kind: claims.kind, subject: claims.subjectId }, 'PBX leg: not answered (the asker left)');
    return null;
  }
  const leg = new AskerLeg(`xnode-pbx-asker:${claims.kind}:${claims.callId}`, made.endpoint, dialog);
  dialog.on('destroy', () => leg.end('hangup', false));
  leg.watchAsker(deps, claims.callId, deps.logger, watchMs);
  return leg;
}
