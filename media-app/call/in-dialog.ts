/**
 * Who answers an in-dialog request other than re-INVITE, BYE and INFO (the session's own: DTMF,
 * call/dtmf.ts) ('refer': media-app/transfer), per node (its CallDeps). The session asks here when
 * its dialog is up. 'modify' is a watcher of the re-INVITEs the session answers itself (it must not
 * answer: call/peer-hold.ts).
 */
import type { SrfRequest, SrfResponse } from '../kit/srf';

export type InDialogEvent = 'refer' | 'message' | 'notify' | 'modify';
export type InDialogHandler<C> = (call: C, req: SrfRequest, res: SrfResponse) => void;

const handlers = new WeakMap<object, Map<InDialogEvent, InDialogHandler<never>>>();

/** Registers, for one node (its CallDeps), who answers an in-dialog request. */
export function onInDialogRequest<C>(deps: object, event: InDialogEvent, fn: InDialogHandler<C>): void {
  let m = handlers.get(deps);
  if (!m) handlers.set(deps, (m = new Map<InDialogEvent, InDialogHandler<never>>()));
  m.set(event, fn as InDialogHandler<never>);
}

/** The handlers registered for this node. */
export function inDialogHandlers<C>(deps: object): [InDialogEvent, InDialogHandler<C>][] {
  return [...(handlers.get(deps) ?? [])] as [InDialogEvent, InDialogHandler<C>][];
}
