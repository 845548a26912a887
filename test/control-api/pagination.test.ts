import { expect } from 'chai';
import request from 'supertest';
import { useTestApp, type TestApp, type Fixture } from '../../testkit/api';
import { testDb } from '../../testkit/db';
import { clock } from '../../core/clock';
import { decodePageToken, encodePageToken, paginate, parsePageQuery } from '../../core/pagination';
import { accesskeysRepo } from '../../core/repos';

describe('pagination: timestamp cursor stable with equal timestamps', () => {
  let t: TestApp;
  let f: Fixture;
  useTestApp((s) => ({ t, f } = s), { each: true });

  async function walk(pageSize: number | undefined): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let token = '';
    let pages = 0;
    for (;;) {
      const q: Record<string, string> = { accesskey: f.accesskey };
      if (pageSize !== undefined) q.page_size = String(pageSize);
      if (token) q.page_token = token;
      const res = await request(t.app).get('/v1.0/accesskeys').query(q);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.result).to.be.an('array');
      expect(res.body.next_page_token).to.be.a('string');
      ids.push(...res.body.result.map((r: { id: string }) => r.id));
      pages++;
      token = res.body.next_page_token;
      if (!token) return { ids, pages };
      expect(pages).to.be.below(50);
    }
  }

  it('250 rows sharing one tm_create: pages of 100, 100, 50, no duplicate, none skipped', async () => {
    clock.setNow(new Date('2026-05-05T05:05:05.123Z'));
    const repo = accesskeysRepo(t.ctx.db);
    const created = [f.accesskeyRow.id];
    for (let i = 0; i < 249; i++) created.push((await repo.create({ customer_id: f.customer.id, name: `k${i}` })).row.id);
    clock.reset();
    const { ids, pages } = await walk(undefined);
    expect(pages).to.equal(3);
    expect(ids).to.have.length(250);
    expect(new Set(ids).size).to.equal(250);
    expect([...ids].sort()).to.deep.equal([...created].sort());
    // Equal timestamps are ordered by id, descending.
    const sameTime = ids.filter((id) => id !== f.accesskeyRow.id);
    expect(sameTime).to.deep.equal([...sameTime].sort().reverse());
  });

  it('mixed timestamps with small pages, newest first; a deleted row disappears from lists', async () => {
    const repo = accesskeysRepo(t.ctx.db);
    const base = Date.parse('2026-01-01T00:00:00Z');
    for (let i = 0; i < 23; i++) {
      clock.setNow(base + Math.floor(i / 4) * 1000); // groups of 4 equal timestamps
      await repo.create({ customer_id: f.customer.id, name: `k${i}` });
    }
    clock.reset();
    const { ids, pages } = await walk(5);
    expect(ids).to.have.length(24);
    expect(pages).to.equal(5);
    expect(new Set(ids).size).to.equal(24);
    const rows = await t.ctx.db('accesskeys').whereIn('id', ids).select('id', 'tm_create');
    const tm = new Map(rows.map((r: { id: string; tm_create: Date }) => [r.id, r.tm_create.getTime()]));
    for (let i = 1; i < ids.length; i++) expect(tm.get(ids[i - 1])!).to.be.at.least(tm.get(ids[i])!);
    await repo.softDelete(ids[3]);
    const after = await walk(7);
    expect(after.ids).to.have.length(23);
    expect(after.ids).to.not.include(ids[3]);
  });

  it('page_size: default and maximum 100, out-of-range values clamp', async () => {
    expect(parsePageQuery({})).to.deep.equal({ pageSize: 100, pageToken: '' });
    expect(parsePageQuery({ page_size: '1000' }).pageSize).to.equal(100);
    expect(parsePageQuery({ page_size: '0' }).pageSize).to.equal(100);
    expect(parsePageQuery({ page_size: '-3' }).pageSize).to.equal(100);
    expect(parsePageQuery({ page_size: '7' }).pageSize).to.equal(7);
    expect(() => parsePageQuery({ page_size: '1.5' })).to.throw();
    expect(() => parsePageQuery({ page_size: ['1', '2'] })).to.throw();
  });

  it('tokens: (timestamp, id) round trip; a bare timestamp is accepted; garbage is refused', async () => {
    const us = Date.parse('2026-01-15T09:30:00.123Z') * 1000 + 456;
    const tok = encodePageToken(us, '6f1c2f0e-4b7a-4d3e-9a51-2c0b8e1d7f00');
    expect(tok).to.equal('2026-01-15T09:30:00.123456Z_6f1c2f0e-4b7a-4d3e-9a51-2c0b8e1d7f00');
    expect(decodePageToken(tok)).to.deep.equal({ ts: '2026-01-15T09:30:00.123456Z', id: '6f1c2f0e-4b7a-4d3e-9a51-2c0b8e1d7f00' });
    expect(decodePageToken('2026-01-15T09:30:00.123456Z')).to.deep.equal({ ts: '2026-01-15T09:30:00.123456Z', id: null });
    expect(decodePageToken('2026-01-15 09:30:00.123456')).to.not.equal(null);
    for (const bad of ['', 'x', '2026-13-45T99:99:99Z', '2026-01-15T09:30:00Z_nope', "2026-01-15T09:30:00Z'; drop table x"]) {
      expect(decodePageToken(bad), bad).to.equal(null);
    }
    // A bare timestamp cursor lists strictly older rows.
    const db = await testDb();
    const p = await paginate<{ id: string }>(db('accesskeys').select('*'), { pageSize: 10, pageToken: '2000-01-01T00:00:00Z' });
    expect(p.rows).to.have.length(0);
  });
});
