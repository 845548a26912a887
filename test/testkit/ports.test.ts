// testkit/ports.ts: what one test process hands out of its slice of the port ranges.
import { expect } from 'chai';
import { shardSlice, sipPortPair } from '../../testkit/ports';

describe('testkit ports: a process hands each port once in turn', () => {
  it("sipPortPair hands a pair again only after the others of its slice, not at random (each one's user binds it later)", async () => {
    const slice = shardSlice('sipPair', 2);
    const pairs = Math.floor((slice.max - slice.min + 1) / 2);
    const got: number[] = [];
    // half the slice's pairs: 60 drawn at random from 111 (slice 1 of 9) repeat one with a chance over 99.99 %
    for (let i = 0; i < Math.min(60, Math.floor(pairs / 2)); i++) got.push(await sipPortPair());
    expect(new Set(got).size, got.join(' ')).to.equal(got.length);
    for (const p of got) expect((p - slice.min) % 2, `${p} starts a pair of the slice's grid`).to.equal(0);
  });
});
