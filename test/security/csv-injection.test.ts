/**
 * Issue 52, finding 5: the CDR CSV export left a formula after a `;` or a TAB inside a value as it
 * was, so a spreadsheet that splits on `;` (a European locale's default) or TAB ran it. Every CSV
 * cell the platform writes (core/csv.ts, shared by the CDR export) is read back the way a
 * spreadsheet may read it: split on `,` `;` TAB `|` and line breaks, leading spaces dropped, and no
 * piece may begin with = + - @ TAB or CR. Checked on the cell writer and on the real export (real
 * HTTP, real Postgres).
 */
import { insertCallRow, parseCsv } from '../../testkit/cdr';
import { expect } from 'chai';
import request from 'supertest';
import { csvCell, csvRow } from '../../core/csv';
import { CDR_FIELDS } from '../../core/calls/cdr';
import { buildTestApp, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { textBody } from '../../testkit/buffer-body';

const BAD = ['=HYPERLINK("http://x","y")', "x;=cmd|' /C calc'!A0", 'Bob\t=1+2', 'a,=SUM(1)', 'a;  @SUM(A1)', 'line\n-2+3', 'line\r\n+cmd', 'a|=2', ';=1', '\t\t=1', ' =1'];

/** The cell's text as RFC 4180 gives it back (quotes removed, doubled quotes single). */
function unquote(cell: string): string {
  return cell.startsWith('"') ? cell.slice(1, -1).replace(/""/g, '"') : cell;
}

/** The pieces a spreadsheet may make of one value, splitting on any separator it might use. */
const pieces = (text: string) => text.split(/[,;\t\r\n|]/);

/** Pieces that would run as a formula (an apostrophe first makes a piece text). */
function formulas(text: string): string[] {
  return [text, ...pieces(text)].filter((p) => /^ *[=+\-@\t\r]/.test(p));
}

describe('security: CSV formula injection (issue 52, finding 5)', function () {
  this.timeout(60_000);

  it('the cell writer leaves no piece that starts a formula, however the cell is split', () => {
    for (const v of BAD) {
      const text = unquote(csvCell(v));
      expect(formulas(text), JSON.stringify(v)).to.deep.equal([]);
      // nothing but apostrophes is added: removing them gives the value back
      expect(text.replace(/'/g, ''), JSON.stringify(v)).to.equal(v.replace(/'/g, ''));
    }
    // a value with a separator a reader may split on is quoted, so a reader splitting there keeps it whole
    expect(csvCell('a;b')).to.equal('"a;b"');
    expect(csvCell('a\tb')).to.equal('"a\tb"');
    // harmless values and numbers as they are
    expect(csvCell('sip:alice@example.com')).to.equal('sip:alice@example.com');
    expect(csvCell('a-b+c@d')).to.equal('a-b+c@d');
    expect(csvCell(-3)).to.equal('-3');
    expect(csvCell(null)).to.equal('');
    expect(csvRow(['a', 1, null])).to.equal('a,1,\r\n');
  });

  describe('GET /v1.0/calls/export', () => {
    let t: TestApp;
    let f: Fixture;
    before(async () => {
      t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
      f = await createFixture(t.ctx);
    });
    after(async () => t?.close());

    it('exports the bad values defused in every column a caller controls', async () => {
      for (const [i, v] of BAD.entries()) {
        // hangup_reason is any text a far end's cause may bring
        const reason: Record<string, unknown> = { hangup_reason: v };
        await insertCallRow(t.ctx.db, f.customer.id, {
          source: { type: 'sip', target: v, target_name: v },
          destination: { type: 'tel', target: '+15550002222', target_name: v },
          tm_create: new Date(Date.UTC(2026, 2, 1, 10, i)),
          ...reason,
        });
      }
      const res = await request(t.app)
        .get('/v1.0/calls/export')
        .query({ accesskey: f.accesskey, start: '2026-03-01T00:00:00Z', end: '2026-03-02T00:00:00Z', format: 'csv' })
        .buffer(true)
        .parse(textBody);
      expect(res.status).to.equal(200);
      const rows = parseCsv(res.body as string);
      expect(rows[0]).to.deep.equal([...CDR_FIELDS]);
      expect(rows).to.have.length(BAD.length + 1);
      const col = (name: string) => CDR_FIELDS.indexOf(name as (typeof CDR_FIELDS)[number]);
      for (const [i, row] of rows.slice(1).entries()) {
        for (const name of ['source_target', 'source_name', 'destination_name', 'hangup_reason']) {
          const cell = row[col(name)]!;
          expect(formulas(cell), `${name} of ${JSON.stringify(BAD[i])}: ${JSON.stringify(cell)}`).to.deep.equal([]);
          expect(cell.replace(/'/g, '')).to.equal(BAD[i]!.replace(/'/g, ''));
        }
      }
    });
  });
});
