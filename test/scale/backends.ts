// The media backends the cross-node suites (test/scale/*-xnode.test.ts) run on.
import { expect } from 'chai';
import type { Cluster } from '../../testkit/scale/cluster';
/**
 * The media backends a cross-node suite runs on (issue 55): every test on the embedded engine, the tests
 * whose subject is the media across nodes on the fsmrf backend too (each node on a switch of its own:
 * testkit/scale/cluster.ts), the rest (signatures, refusals, a lost node) being the same code on both.
 */
export const XNODE_BACKENDS = ['embedded', 'fsmrf'] as const;
export type XnodeBackend = (typeof XNODE_BACKENDS)[number];

/** A suite's title on `backend`: as it was on the embedded engine, marked on fsmrf. */
export const onBackend = (title: string, backend: XnodeBackend): string => (backend === 'embedded' ? title : `${title} (fsmrf backend)`);

/** On fsmrf, the media of the calls in progress is on the nodes' switches: the switch of each node of `nodes` (default: every node) carries channels now. */
export function expectOnSwitches(c: Cluster, backend: XnodeBackend, nodes: number[] = c.nodes.map((_, i) => i)): void {
  if (backend !== 'fsmrf') return;
  const counts = c.switchChannels();
  expect(counts, "the nodes' switches").to.have.length(c.nodes.length);
  for (const i of nodes) expect(counts[i], `channels on node ${i}'s switch`).to.be.greaterThan(0);
}
