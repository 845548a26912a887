// Generated bad input for an OpenAPI operation: bad path ids, bad query values, bodies of the
// wrong type, unknown fields, huge strings, deep nesting and unparseable JSON. Drawn with
// fast-check from a seed so a failure can be replayed.
import fc from 'fast-check';

type Json = Record<string, any>;

export interface BadRequest {
  path: string;
  query: Record<string, string | string[]>;
  body?: unknown;
  raw?: string;
  contentType?: string;
  what: string;
}

const BAD_IDS = [
  'not-a-uuid',
  "1' OR '1'='1",
  'x'.repeat(3000),
  '%00',
  '..%2F..%2Fetc%2Fpasswd',
  '00000000-0000-0000-0000-000000000000',
  '-1',
  '1e309',
  '%E2%80%AE',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '12345678-1234-1234-1234-1234567890123',
  '%F0%9F%92%A9',
];
const BAD_QUERY = ['x'.repeat(10_000), '-1', 'NaN', '[]', '{"a":1}', '', '9999999999999999999999', 'true', '\u0000', '💩', "'; select pg_sleep(1);--"];
const WRONG: unknown[] = [null, 0, -1, 1.5, 1e308, true, 'x', '', [], [null], {}, { a: { b: { c: 1 } } }, 'x'.repeat(100_000)];

/** A value of a type other than the property's. */
function wrongFor(prop: Json | undefined): fc.Arbitrary<unknown> {
  const t = prop?.type;
  return fc.constantFrom(
    ...WRONG.filter((v) => {
      if (t === 'string') return typeof v !== 'string' || (v as string).length > 50_000;
      if (t === 'integer' || t === 'number') return typeof v !== 'number' || !Number.isInteger(v);
      if (t === 'boolean') return typeof v !== 'boolean';
      if (t === 'array') return !Array.isArray(v);
      if (t === 'object') return v === null || typeof v !== 'object' || Array.isArray(v);
      return true;
    }),
  );
}

function deep(n: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < n; i++) v = { a: v };
  return v;
}

export function badRequests(pathTemplate: string, op: Json, count: number, seed: number): BadRequest[] {
  const params: Json[] = op.parameters ?? [];
  const queryNames = [...new Set(params.filter((p) => p.in === 'query').map((p) => p.name as string))];
  const schema: Json | undefined = op.requestBody?.content?.['application/json']?.schema;
  const props: Record<string, Json> = schema?.properties ?? {};
  const propNames = Object.keys(props);
  const uuid = fc.uuid().map(String);
  const pathArb = fc.oneof(uuid, fc.constantFrom(...BAD_IDS)).map((id) => pathTemplate.replace(/\{[^}]+\}/g, () => id));
  const queryArb = queryNames.length
    ? fc.dictionary(fc.constantFrom(...queryNames), fc.oneof(fc.constantFrom(...BAD_QUERY), fc.array(fc.constantFrom(...BAD_QUERY), { minLength: 2, maxLength: 3 })), { maxKeys: 3 })
    : fc.constant({});
  const bodyArb: fc.Arbitrary<Pick<BadRequest, 'body' | 'raw' | 'contentType' | 'what'>> = fc.oneof(
    propNames.length
      ? fc.constantFrom(...propNames).chain((k) => wrongFor(props[k]).map((v) => ({ body: { [k]: v }, what: `wrong type for ${k}` })))
      : fc.constant({ body: { name: 1 }, what: 'unknown field name' }),
    fc.constant({ body: { __unknown__: 'x', constructor: { prototype: { polluted: true } } }, what: 'unknown fields' }),
    fc.constant({ body: { ['__proto__']: { admin: true } }, what: '__proto__' }),
    fc.constantFrom<unknown>(null, [], 'string', 42, [1, 2, 3]).map((b) => ({ body: b, what: `body ${JSON.stringify(b)}` })),
    fc.constant({ body: deep(200), what: 'deep nesting' }),
    fc.constantFrom('{', '{"a":', '{"a":1,}', "{'a':1}", '\u0000', 'null null', '{"a":"\\ud800"}').map((raw) => ({ raw, contentType: 'application/json', what: `bad json ${raw}` })),
    fc.constant({ raw: 'a=1&b=2', contentType: 'application/x-www-form-urlencoded', what: 'form body' }),
    fc.constant({ raw: '<xml/>', contentType: 'text/xml', what: 'xml body' }),
    propNames.length
      ? fc.constant({ body: Object.fromEntries(propNames.map((k) => [k, props[k]?.type === 'string' ? 'x'.repeat(70_000) : 'x'])), what: 'huge strings in every field' })
      : fc.constant({ body: { x: 'x'.repeat(70_000) }, what: 'huge unknown string' }),
  );
  return fc.sample(fc.tuple(pathArb, queryArb, bodyArb), { numRuns: count, seed }).map(([path, query, b]) => ({
    path,
    query,
    ...b,
    what: `${b.what}; query ${Object.keys(query).join(',') || '-'}`,
  }));
}
