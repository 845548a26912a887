// testkit/ports.ts: the suite's port ranges cut into disjoint slices, one per mocha process running at
// once (scripts/test-run.ts gives each shard its pool worker's slot), each holding the largest blocks a test takes.
import fs from 'node:fs';
import { expect } from 'chai';
import { MAX_PORT_SLICES, PORT_RANGES, portSlot, shardSlice, type PortRangeName } from '../../testkit/ports';

describe('testkit/ports.ts: the test port ranges cut into slices, one per running mocha process', () => {
  it('each range is cut into disjoint slices inside it, one per shard', () => {
    for (let count = 1; count <= MAX_PORT_SLICES; count++) {
      for (const name of Object.keys(PORT_RANGES) as PortRangeName[]) {
        const align = name.endsWith('Rtp') || name === 'rtpengine' ? 200 : name === 'sippMedia' ? 4 : name === 'sipPair' ? 2 : 1;
        const slices = Array.from({ length: count }, (_, i) => shardSlice(name, align, { TEST_SHARD: String(i + 1), TEST_SHARDS: String(count) }));
        const [lo, hi] = PORT_RANGES[name];
        for (const [i, s] of slices.entries()) {
          expect(s.min, `${name} ${i + 1}/${count}`).to.be.at.least(lo);
          expect(s.max, `${name} ${i + 1}/${count}`).to.be.at.most(hi);
          expect((s.min - lo) % align).to.equal(0);
          if (i > 0) expect(s.min, `${name} ${i + 1}/${count} after ${i}`).to.be.greaterThan(slices[i - 1]!.max);
        }
      }
    }
  });

  it('at every shard count up to MAX_PORT_SLICES, each slice holds the largest blocks the suite takes of its range', () => {
    // [range, ports in one block, alignment, blocks one test holds at once], as the suite asks for them
    const needs: [PortRangeName, number, number, number][] = [
      ['platformRtp', 1000, 1000, 1], // testkit/reliability/supervised.ts, its default
      ['platformRtp', 400, 400, 1], // test/streams/twilio-concurrency.test.ts
      ['engineRtp', 1300, 2, 1], // test/media-engine/worker-realtime.test.ts, 600 legs
      ['nodeRtp', 200, 200, 3], // testkit/scale/cluster.ts, a block a node: three in test/scale/conference-xnode
      ['rtpengine', 200, 200, 2], // testkit/rtpengine.ts: two engines of one test never share a block
      ['sippMedia', 4, 4, 1],
      ['sipPair', 2, 2, 1],
      ['free', 1, 1, 1],
    ];
    for (let count = 1; count <= MAX_PORT_SLICES; count++) {
      for (const [name, size, align, blocks] of needs) {
        for (const index of [1, count]) {
          const s = shardSlice(name, align, { TEST_SHARD: String(index), TEST_SHARDS: String(count) });
          expect(s.max - s.min + 1, `${name} slice ${index}/${count}: ${blocks} × ${size}`).to.be.at.least(size * blocks);
        }
      }
    }
    expect(() => portSlot({ TEST_SHARD: '1', TEST_SHARDS: String(MAX_PORT_SLICES + 1) })).to.throw(/TEST_SHARDS <= /);
    expect(() => portSlot({ TEST_PORT_SLOT: '1', TEST_PORT_SLOTS: String(MAX_PORT_SLICES + 1) })).to.throw(/TEST_PORT_SLOTS <= /);
  });

  it("ranges whose tests count ports, or probe a port free and hand it to another process, lie outside the kernel's ephemeral ports", () => {
    // Any process binding port 0 (a test's far-end socket, Chromium's ICE, a resolver) takes a random port of
    // ip_local_port_range: inside one of these ranges it holds a port the suite assumed its own. CI on 147bf815:
    // bridge-conference's pool of 20 pairs gave 18, one pair held by someone else ("no free RTP port").
    // platformRtp and rtpengine stay inside: their engines skip a busy port and no test counts them.
    const [lo, hi] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number) as [number, number];
    for (const name of ['sipPair', 'sippMedia', 'nodeRtp', 'engineRtp', 'free'] as const) {
      const [min, max] = PORT_RANGES[name];
      expect(max < lo || min > hi, `${name} ${min}-${max} against the ephemeral ${lo}-${hi}`).to.equal(true);
    }
  });

  it('the named ranges do not overlap each other', () => {
    const ranges = Object.entries(PORT_RANGES).sort((a, b) => a[1][0] - b[1][0]);
    for (let i = 1; i < ranges.length; i++) expect(ranges[i]![1][0], `${ranges[i]![0]} after ${ranges[i - 1]![0]}`).to.be.greaterThan(ranges[i - 1]![1][1]);
  });

  it("a process's slot: TEST_PORT_SLOT of TEST_PORT_SLOTS (the pool's worker) before TEST_SHARD of TEST_SHARDS; bad ones refused", () => {
    expect(portSlot({})).to.deep.equal({ index: 1, count: 1 });
    expect(portSlot({ TEST_SHARD: '7', TEST_SHARDS: '12', TEST_PORT_SLOT: '2', TEST_PORT_SLOTS: '3' })).to.deep.equal({ index: 2, count: 3 });
    expect(portSlot({ TEST_SHARD: '2', TEST_SHARDS: '3' })).to.deep.equal({ index: 2, count: 3 });
    expect(() => portSlot({ TEST_SHARD: '1', TEST_SHARDS: '2', TEST_PORT_SLOT: '3', TEST_PORT_SLOTS: '2' })).to.throw(/TEST_PORT_SLOT/);
    for (const env of [
      { TEST_SHARD: '3', TEST_SHARDS: '2' },
      { TEST_SHARD: '0', TEST_SHARDS: '2' },
      { TEST_SHARD: 'x', TEST_SHARDS: '2' },
      { TEST_SHARD: '1', TEST_SHARDS: '0' },
    ]) {
      expect(() => portSlot(env), JSON.stringify(env)).to.throw(/TEST_SHARD/);
    }
  });
});
