import type { MessagePort } from 'node:worker_threads';

/** Messages between the API thread (MediaServer, Endpoint, Conference) and a media worker. */

export type ToWorker =
  | { t: 'call'; id: number; method: string; args: unknown[] }
  | { t: 'forkAck'; forkId: string; n: number }
  | { t: 'inject'; forkId: string; samples: Int16Array }
  | { t: 'link'; linkId: string; port: MessagePort };

export type FromWorker =
  | { t: 'ready' }
  | { t: 'reply'; id: number; ok: true; result: unknown }
  | { t: 'reply'; id: number; ok: false; error: { message: string; code?: string } }
  | { t: 'event'; target: string; name: string; data: unknown }
  | { t: 'fork'; forkId: string; frame: Int16Array };
