// A reply asked ahead (core/ai/prefetch.ts): taken by a reply that was already aborted (a barge-in
// while the knowledge base was searched, say), it yields nothing and closes its request, as the LLM
// client's own stream does; a request that failed is marked so that the reply asks again.
import { expect } from 'chai';
import { Prefetch } from '../../core/ai/prefetch';
import type { ChatChunk } from '../../core/llm/client';

/** An LLM answer streamed a piece every 10 ms until its signal aborts; `seen.aborted` tells whether it did. */
function answer(seen: { aborted: boolean }, fail = false) {
  return async function* (_m: unknown, signal: AbortSignal): AsyncGenerator<ChatChunk> {
    signal.addEventListener('abort', () => (seen.aborted = true));
    for (let i = 0; i < 50 && !signal.aborted; i++) {
      if (fail && i === 2) throw new Error('HTTP 429');
      yield { type: 'text', text: `piece ${i} ` };
      await new Promise((r) => setTimeout(r, 10));
    }
  };
}

describe('ai: a reply asked ahead (Prefetch)', () => {
  it('replayed under a signal already aborted: yields nothing, throws the abort, closes the request', async () => {
    const seen = { aborted: false };
    const pre = new Prefetch('tell me a story', [{ role: 'user', content: 'tell me a story' }], answer(seen));
    await new Promise((r) => setTimeout(r, 50)); // some pieces buffered
    const ctl = new AbortController();
    ctl.abort();
    const got: ChatChunk[] = [];
    let error: unknown = null;
    try {
      for await (const c of pre.replay(ctl.signal)) got.push(c);
    } catch (e) {
      error = e;
    }
    expect(got, 'nothing of the buffered answer').to.deep.equal([]);
    expect((error as Error | null)?.name).to.equal('AbortError');
    expect(seen.aborted, 'the request was closed').to.equal(true);
    expect(pre.aborted).to.equal(true);
  });

  it('aborted while replaying: stops at the next piece and closes the request', async () => {
    const seen = { aborted: false };
    const pre = new Prefetch('tell me a story', [], answer(seen));
    const ctl = new AbortController();
    const got: ChatChunk[] = [];
    let error: unknown = null;
    try {
      for await (const c of pre.replay(ctl.signal)) {
        got.push(c);
        if (got.length === 3) ctl.abort();
      }
    } catch (e) {
      error = e;
    }
    expect(got).to.have.length(3);
    expect((error as Error | null)?.name).to.equal('AbortError');
    expect(seen.aborted).to.equal(true);
  });

  it('a request that failed is marked failed (a reply asks again instead of taking it)', async () => {
    const pre = new Prefetch('tell me a story', [], answer({ aborted: false }, true));
    await new Promise((r) => setTimeout(r, 80));
    expect(pre.failed).to.equal(true);
    expect(pre.aborted).to.equal(false);
  });
});
