/**
 * `Event: dialog` (RFC 4235): application/dialog-info+xml, always full state, a version counted per
 * subscription. Each live dialog of the resource (its call legs and what a feature published) with
 * its state, direction and remote identity; a dialog that just ended is shown once as terminated.
 * A ringing extension shows `early` (a BLF key blinks), a call in progress `confirmed`.
 */
import type { DialogEntry, PresenceStore } from '../../core/presence/store';
import type { EventPackage, Resource } from './package';
import { xmlEscape } from './xml';

export const DIALOG_INFO = 'application/dialog-info+xml';

function dialogXml(d: DialogEntry, self: string, now: number): string {
  const attrs = [`id="${xmlEscape(d.id)}"`];
  if (d.callId) attrs.push(`call-id="${xmlEscape(d.callId)}"`);
  if (d.localTag) attrs.push(`local-tag="${xmlEscape(d.localTag)}"`);
  if (d.remoteTag) attrs.push(`remote-tag="${xmlEscape(d.remoteTag)}"`);
  if (d.direction) attrs.push(`direction="${d.direction}"`);
  const lines = [`  <dialog ${attrs.join(' ')}>`, `    <state>${d.state}</state>`];
  if (d.since) lines.push(`    <duration>${Math.max(0, Math.round((now - d.since) / 1000))}</duration>`);
  lines.push(`    <local><identity>${xmlEscape(self)}</identity></local>`);
  if (d.remote) {
    const display = d.remote.display ? ` display="${xmlEscape(d.remote.display)}"` : '';
    lines.push(`    <remote><identity${display}>${xmlEscape(d.remote.uri)}</identity><target uri="${xmlEscape(d.remote.uri)}"/></remote>`);
  }
  lines.push('  </dialog>');
  return lines.join('\n');
}

/** The dialog-info document of a resource's dialogs (exported for the benchmark and tests of the format). */
export function dialogInfo(entity: string, version: number, dialogs: readonly DialogEntry[], now = Date.now()): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<dialog-info xmlns="urn:ietf:params:xml:ns:dialog-info" version="${version}" state="full" entity="${xmlEscape(entity)}">`,
    ...dialogs.map((d) => dialogXml(d, entity, now)),
    '</dialog-info>',
    '',
  ].join('\n');
}

export function dialogPackage(store: PresenceStore): EventPackage {
  return {
    event: 'dialog',
    contentType: DIALOG_INFO,
    kinds: ['dialog'],
    async prepare(r: Resource, change) {
      const live = await store.dialogs(r.customerId, r.name);
      const ended = (change?.ended ?? []).filter((e) => !live.some((d) => d.id === e.id));
      const entity = `sip:${r.name}@${r.domain}`;
      const now = Date.now();
      return (version) => dialogInfo(entity, version, [...live, ...ended], now);
    },
  };
}
