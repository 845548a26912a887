// The byte range a Range header asks of a file (core/storage/range.ts, RFC 9110 §14), and a range cut out of a
// stream of the whole file (a bucket that answers a Range GET whole).
import { expect } from 'chai';
import { Readable } from 'node:stream';
import { requestedRange, sliceStream } from '../../core/storage/range';

describe('storage: byte ranges', () => {
  it('reads one range, clipped to the file; a suffix; past the end is unsatisfiable; anything else is served whole', () => {
    expect(requestedRange(undefined, 100)).to.equal(null);
    expect(requestedRange('bytes=0-9', 100)).to.deep.equal({ start: 0, end: 9 });
    expect(requestedRange('bytes=90-', 100)).to.deep.equal({ start: 90, end: 99 });
    expect(requestedRange('bytes=90-500', 100)).to.deep.equal({ start: 90, end: 99 });
    expect(requestedRange('bytes=-10', 100)).to.deep.equal({ start: 90, end: 99 });
    expect(requestedRange('bytes=-500', 100)).to.deep.equal({ start: 0, end: 99 });
    expect(requestedRange('bytes=100-', 100)).to.equal('unsatisfiable');
    expect(requestedRange('bytes=-0', 100)).to.equal('unsatisfiable');
    expect(requestedRange('bytes=0-', 0)).to.equal('unsatisfiable');
    for (const h of ['bytes=9-0', 'bytes=0-1,5-6', 'items=0-1', 'bytes=', 'bytes=-', 'bytes=a-b', 'bytes=99999999999999999999-']) expect(requestedRange(h, 100), h).to.equal(null);
  });

  it('cuts a range out of a stream of the whole file across chunks, and stops reading it', async () => {
    const data = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
    let pulled = 0;
    const source = new Readable({
      read() {
        if (pulled >= data.length) return void this.push(null);
        this.push(data.subarray(pulled, pulled + 64));
        pulled += 64;
      },
    });
    const chunks: Buffer[] = [];
    for await (const c of sliceStream(source, { start: 100, end: 299 })) chunks.push(c as Buffer);
    expect(Buffer.compare(Buffer.concat(chunks), data.subarray(100, 300))).to.equal(0);
    expect(source.destroyed).to.equal(true);
    expect(pulled).to.be.below(data.length);
  });
});
