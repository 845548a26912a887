/** Who is signed in, or why nothing is usable: one state, one transition function. */
import { api, ApiError, isGateReason, type Agent, type Customer } from './api';

export type Session =
  | { kind: 'loading' }
  | { kind: 'signed-out'; notice?: string }
  /** The account status gate (frozen, expired, deleted): only the recovery action is offered. */
  | { kind: 'gated'; reason: string; recovery: string; deletionAt: string; email: string }
  | { kind: 'signed-in'; me: Agent; customer: Customer };

export type SessionInput = { type: 'loaded'; me: Agent; customer: Customer } | { type: 'error'; error: unknown; email?: string } | { type: 'signed-out'; notice?: string };

export function next(_s: Session, input: SessionInput): Session {
  switch (input.type) {
    case 'loaded':
      return { kind: 'signed-in', me: input.me, customer: input.customer };
    case 'signed-out':
      return { kind: 'signed-out', notice: input.notice };
    case 'error': {
      const e = input.error;
      if (e instanceof ApiError && isGateReason(e.reason)) {
        const d = e.details[0] ?? {};
        return {
          kind: 'gated',
          reason: e.reason,
          recovery: typeof d.recovery_endpoint === 'string' ? d.recovery_endpoint : '',
          deletionAt: typeof d.deletion_effective_at === 'string' ? d.deletion_effective_at : '',
          email: input.email ?? '',
        };
      }
      return { kind: 'signed-out', notice: e instanceof ApiError && e.httpStatus === 401 ? undefined : String((e as Error).message ?? e) };
    }
  }
}

/** Asks the API who we are: the agent, then its customer. */
export async function loadSession(): Promise<SessionInput> {
  try {
    const me = await api.get<Agent>('/me');
    const customer = await api.get<Customer>('/customer');
    return { type: 'loaded', me, customer };
  } catch (error) {
    return { type: 'error', error };
  }
}
