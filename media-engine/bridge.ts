/**
 * Links between media workers, made from the API thread: a MessageChannel whose ends go to the two
 * workers, so a leg can be bridged to a leg (or join a conference) that another worker owns.
 */
import { randomUUID } from 'node:crypto';
import { MessageChannel } from 'node:worker_threads';
import type { WorkerHost } from './worker/worker-host';

export interface CrossLink {
  id: string;
  hosts: [WorkerHost, WorkerHost];
}

export function openLink(a: WorkerHost, b: WorkerHost): CrossLink {
  const ch = new MessageChannel();
  const id = `link-${randomUUID()}`;
  a.post({ t: 'link', linkId: id, port: ch.port1 }, [ch.port1]);
  b.post({ t: 'link', linkId: id, port: ch.port2 }, [ch.port2]);
  return { id, hosts: [a, b] };
}

export async function closeLink(link: CrossLink): Promise<void> {
  await Promise.allSettled(link.hosts.map((h) => h.call('unlink', link.id)));
}
