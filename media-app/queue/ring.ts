/**
 * Rings one agent for a waiting caller: a chained outgoing leg per address (ringall: all at once,
 * the first to answer wins; linear: one after another), dialled through the node's ordinary
 * outbound path (extension bindings, routes and providers for tel, SIP URIs directly).
 */
import { callsRepo, type Address } from '../../core/repos/calls';
import type { AgentRow } from '../../core/repos/agents';
import type { CallFactory } from '../call/factory';
import { CallSession } from '../call/session';

export interface Ringing {
  /** The answered leg, or null when no address answered (or `cancel` was called first). */
  readonly answered: Promise<CallSession | null>;
  /** Hangs up every leg still ringing. */
  cancel(): void;
}

async function newLeg(factory: CallFactory, caller: CallSession, to: Address): Promise<CallSession> {
  const repo = callsRepo(factory.deps.db);
  const row = await repo.create({
    customer_id: caller.row.customer_id,
    // the agent sees who is calling
    source: caller.row.source,
    destination: { type: to.type, target: to.target, target_name: to.target_name, name: to.name, detail: to.detail },
    direction: 'outgoing',
    status: 'dialing',
    master_call_id: caller.id,
    node_id: factory.deps.calls.nodeId,
    data: {},
  });
  await repo.addChained(caller.id, row.id);
  const leg = new CallSession(row, factory.deps);
  await factory.deps.calls.add(leg);
  await leg.publish('call_created');
  caller.adopt(leg);
  return leg;
}

export function ringAgent(factory: CallFactory, caller: CallSession, agent: AgentRow): Ringing {
  const legs: CallSession[] = [];
  let cancelled = false;
  const dialOne = async (a: Address): Promise<CallSession | null> => {
    if (cancelled || caller.isEnded) return null;
    const leg = await newLeg(factory, caller, a);
    legs.push(leg);
    if (cancelled) {
      await leg.hangup('normal');
      return null;
    }
    const up = await factory.dialOut(leg, { near: caller });
    return up ? leg : null;
  };
  const addresses = agent.addresses ?? [];
  const answered = (async (): Promise<CallSession | null> => {
    let winner: CallSession | null = null;
    if (agent.ring_method === 'linear') {
      for (const a of addresses) if ((winner = await dialOne(a as Address))) break;
    } else {
      winner = await new Promise<CallSession | null>((resolve) => {
        let left = addresses.length;
        if (!left) resolve(null);
        for (const a of addresses) {
          dialOne(a as Address).then(
            (leg) => (leg ? resolve(leg) : --left === 0 && resolve(null)),
            () => --left === 0 && resolve(null),
          );
        }
      });
    }
    for (const l of legs) if (l !== winner) void l.hangup('normal');
    if (winner && (cancelled || caller.isEnded)) {
      await winner.hangup('normal');
      return null;
    }
    return winner;
  })();
  return {
    answered,
    cancel() {
      cancelled = true;
      for (const l of legs) void l.hangup('normal');
    },
  };
}
