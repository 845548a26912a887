/**
 * The holding node's end of a cross-node <Dial><Queue> (docs/queues.md): another node's dequeuing call
 * sent a PBX leg (media-app/xnode/pbx-leg.ts, kind `dequeue`, signed; media-app/pbx/accept-leg.ts
 * checked it) for a queuecall whose caller waits here. The caller is claimed as a local dequeue claims
 * it (waiting → connecting), hears the dequeue's whisper (left in Redis by the asking node), then the
 * leg is answered, the queuecall goes to service and the caller is bridged to the leg until one side
 * leaves: the caller's flow goes on (its Enqueue result `bridged`), the leg is hung up.
 *
 * 404 Nothing To Dequeue when the caller is not waiting here (taken, gone, another node's). The asking
 * call leaving before the answer CANCELs the INVITE: the caller goes back to waiting. So does any
 * failure before service (the whisper, the answer, the DB move throwing): put back, then rethrown.
 */
import type { SrfRequest, SrfResponse } from '../kit/srf';
import type { PbxLegClaims } from '../xnode/pbx-token';
import { answerPbxLeg, type AskerLeg } from '../xnode/pbx-answer';
import { Bridge } from '../call/bridge';
import type { Entry } from './service';
import { claimEntry, dequeueWhisperKey, putBack, toService, whisperTo, type DequeueHost, type DequeueOptions } from './dequeue';

const NOTHING = 'Nothing To Dequeue';

/** The whisper the asking node left for this dequeue, if any. */
async function whisperOf(h: DequeueHost, dequeuerId: string): Promise<DequeueOptions['whisper']> {
  const deps = h.factory.deps;
  const raw = await deps.redis.getdel(deps.config.redisKeyPrefix + dequeueWhisperKey(dequeuerId)).catch(() => null);
  if (!raw) return undefined;
  try {
    const w = JSON.parse(raw) as { url?: unknown; method?: unknown };
    return typeof w.url === 'string' && /^https?:\/\//.test(w.url) ? { url: w.url, method: w.method === 'GET' ? 'GET' : 'POST' } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whispers to the claimed caller, answers the leg (kept in `held`) and moves the queuecall to service; the
 * leg, or null when it stops short on its own terms (the asker left: the caller put back; the caller gone: 404).
 */
async function connect(h: DequeueHost, e: Entry, c: PbxLegClaims, req: SrfRequest, res: SrfResponse, held: { leg: AskerLeg | null }): Promise<AskerLeg | null> {
  const cancelled = new AbortController();
  req.on('cancel', () => cancelled.abort());
  const log = h.factory.deps.logger;
  await whisperTo(e, await whisperOf(h, c.callId), c.callId, cancelled.signal, (event, data) => log.info({ queuecall: e.qc.id, ...data }, event));
  if (cancelled.signal.aborted) return (await putBack(h, e), null);
  if (e.caller.isEnded || e.ctx.signal.aborted || e.moves.state !== 'connecting') return (res.send(404, NOTHING), null);
  held.leg = await answerPbxLeg(h.factory.deps, req, res, c, e.caller.endpoint);
  if (!held.leg) return (await putBack(h, e), null);
  if ((await toService(h, e)) === null) return (await held.leg.hangup(), null);
  return held.leg;
}

export async function takeThroughLeg(h: DequeueHost, c: PbxLegClaims, req: SrfRequest, res: SrfResponse): Promise<void> {
  const e = h.entries.get(c.subjectId);
  if (!e || e.qc.customer_id !== c.customerId || !(await claimEntry(h, e))) return void res.send(404, NOTHING);
  const log = h.factory.deps.logger;
  const held: { leg: AskerLeg | null } = { leg: null };
  let leg: AskerLeg | null;
  try {
    leg = await connect(h, e, c, req, res, held);
  } catch (err) {
    // a failure between the claim and service (the whisper, the answer, the DB move): the caller goes back
    // to waiting with its wait audio, else it stayed `connecting`, silent, never dequeued again. The
    // router answers an INVITE still pending (500); an answered leg is hung up.
    log.warn({ err: (err as Error).message, queuecall: e.qc.id }, 'dequeue leg failed before the bridge: the caller back to waiting');
    if (held.leg && !held.leg.isEnded) await held.leg.hangup();
    if (e.moves.state === 'service') e.end('service_over');
    else await putBack(h, e).catch((back: Error) => log.error({ err: back.message, queuecall: e.qc.id }, 'dequeue leg: the caller not put back'));
    throw err;
  }
  if (!leg) return;
  try {
    // the caller's flow owns the pair: the leg leaving returns it to its flow; the caller leaving hangs the leg up
    e.bridge = await Bridge.open(e.caller, leg, { kind: 'return_to_flow', owner: e.caller }, log);
    await e.bridge.ended;
  } catch (err) {
    log.warn({ err: (err as Error).message, queuecall: e.qc.id }, 'dequeue leg bridge not opened');
  }
  if (!leg.isEnded) await leg.hangup();
  e.end('service_over');
}
