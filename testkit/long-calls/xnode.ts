// The cross-node conference of the long-call tests: a room made through the API and hosted on one
// node of a Cluster (testkit/scale/cluster.ts), and the node that is not its host, where the
// participants' calls are made so that each reaches the room through a bridge leg (media-app/xnode/leg.ts).
import request from 'supertest';
import type { Fixture } from '../api';
import { until } from '../media-app/harness';
import type { Cluster, ClusterNode } from '../scale/cluster';

/** A conference hosted on one node, and another node of the cluster. */
export async function conferenceOnOneNode(c: Cluster, f: Fixture): Promise<{ id: string; host: ClusterNode; other: ClusterNode }> {
  const res = await request(c.apis[0]!.app).post('/v1.0/conferences').query({ accesskey: f.accesskey }).send({ type: 'conference', name: 'long xnode' });
  if (res.status !== 200) throw new Error(`conference not made: ${res.status} ${JSON.stringify(res.body)}`);
  const id = String(res.body.id);
  const hostId = await until(() => c.redis.get(`${c.prefix}conference-node:${id}`), 10_000, 'the conference hosted');
  const host = c.nodes.find((n) => n.id === hostId);
  const other = c.nodes.find((n) => n.id !== hostId && n.running());
  if (!host || !other) throw new Error(`conference ${id} hosted on ${hostId}: no other node of ${c.nodes.map((n) => n.id).join(', ')}`);
  return { id, host, other };
}
