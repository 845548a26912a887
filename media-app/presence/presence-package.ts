/**
 * `Event: presence` (RFC 3856): a PIDF document (RFC 3863) whose tuple is `open` while the extension
 * has a live registration and `closed` otherwise, with the RPID activity `on-the-phone` (RFC 4480)
 * while it has a dialog that is not terminated. A published resource (a park slot) is always
 * `open`, on the phone while a call is parked in it. It reacts to dialog and registration notices.
 */
import type { PresenceStore } from '../../core/presence/store';
import type { EventPackage, Resource } from './package';
import { xmlEscape } from './xml';

export const PIDF = 'application/pidf+xml';

/** Whether the resource is reachable (an extension with a live binding; a published resource). */
export type Reachability = (r: Resource) => Promise<boolean>;

export function pidf(entity: string, open: boolean, onThePhone: boolean): string {
  const note = !open ? 'Offline' : onThePhone ? 'On the phone' : 'Available';
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<presence xmlns="urn:ietf:params:xml:ns:pidf" xmlns:dm="urn:ietf:params:xml:ns:pidf:data-model" xmlns:rpid="urn:ietf:params:xml:ns:pidf:rpid" entity="${xmlEscape(entity)}">`,
    '  <tuple id="t1">',
    `    <status><basic>${open ? 'open' : 'closed'}</basic></status>`,
    `    <contact>${xmlEscape(entity)}</contact>`,
    `    <note>${note}</note>`,
    '  </tuple>',
    '  <dm:person id="p1">',
    onThePhone ? '    <rpid:activities><rpid:on-the-phone/></rpid:activities>' : '    <rpid:activities><rpid:unknown/></rpid:activities>',
    `    <dm:note>${note}</dm:note>`,
    '  </dm:person>',
    '</presence>',
    '',
  ].join('\n');
}

export function presencePackage(store: PresenceStore, reachable: Reachability): EventPackage {
  return {
    event: 'presence',
    contentType: PIDF,
    kinds: ['dialog', 'registration'],
    async prepare(r: Resource) {
      const [dialogs, open] = await Promise.all([store.dialogs(r.customerId, r.name), reachable(r)]);
      const body = pidf(
        `sip:${r.name}@${r.domain}`,
        open,
        dialogs.some((d) => d.state !== 'terminated'),
      );
      return () => body;
    },
  };
}
