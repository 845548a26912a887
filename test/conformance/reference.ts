/**
 * The reference API document (`reference/voipbin-openapi.json` in this repository, `reference/PROVENANCE.md`):
 * its operations, their documented success codes, and an ajv validator per response schema with the
 * document's `$ref`s (OpenAPI 3 components) resolved in place.
 */
import fs from 'node:fs';
import Ajv, { type ValidateFunction, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { applySpecExceptions, specDateTime } from './spec-exceptions';
import { REFERENCE_DOCUMENT } from '../../scripts/reference-client';

type Json = Record<string, unknown>;

export const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
export type Method = (typeof METHODS)[number];

export interface RefOperation {
  /** `post /flows/{id}`: method and the reference's path spelling. */
  key: string;
  method: Method;
  path: string;
  /** Documented success codes (2xx, and 3xx for redirects to a download), e.g. ['200']. */
  success: string[];
}

/** The repository's copy of the reference document (read by scripts/reference-client.ts too). */
export function referencePath(): string {
  return REFERENCE_DOCUMENT;
}

export function opKey(method: string, p: string): string {
  return `${method.toLowerCase()} ${p}`;
}

const pointerEscape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

export class Reference {
  readonly doc: Json;
  readonly operations: RefOperation[];
  private readonly ajv: Ajv;
  private readonly compiled = new Map<string, ValidateFunction | null>();

  constructor(file = referencePath()) {
    this.doc = JSON.parse(fs.readFileSync(file, 'utf8')) as Json;
    const paths = this.doc.paths as Record<string, Record<string, Json>>;
    this.operations = Object.entries(paths).flatMap(([p, item]) =>
      METHODS.filter((m) => item[m]).map((m) => ({
        key: opKey(m, p),
        method: m,
        path: p,
        success: Object.keys((item[m].responses ?? {}) as Json).filter((c) => /^[23]\d\d$/.test(c)),
      })),
    );
    // OpenAPI 3.0 schemas carry `nullable`, `example`, `discriminator`...: not strict JSON Schema.
    this.ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addFormat('date-time', { type: 'string', validate: specDateTime });
    const schemas = structuredClone(this.doc);
    nullableRefs(schemas);
    applySpecExceptions(schemas);
    this.ajv.addSchema(schemas, 'reference');
  }

  operation(key: string): RefOperation {
    const op = this.operations.find((o) => o.key === key);
    if (!op) throw new Error(`the reference has no operation ${key}`);
    return op;
  }

  private resolve(node: Json): Json {
    let n = node;
    for (let hops = 0; typeof n.$ref === 'string' && hops < 10; hops++) {
      const parts = (n.$ref as string)
        .replace(/^#\//, '')
        .split('/')
        .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
      n = parts.reduce<Json>((acc, k) => acc[k] as Json, this.doc);
    }
    return n;
  }

  /** The validator of the JSON body documented for `code`, or null when that response has no JSON schema. */
  validator(key: string, code: string): ValidateFunction | null {
    const id = `${key} ${code}`;
    if (this.compiled.has(id)) return this.compiled.get(id) ?? null;
    const op = this.operation(key);
    const responses = ((this.doc.paths as Record<string, Record<string, Json>>)[op.path][op.method].responses ?? {}) as Record<string, Json>;
    const response = responses[code] ? this.resolve(responses[code]) : undefined;
    const schema = (response?.content as Record<string, Json> | undefined)?.['application/json']?.schema;
    let v: ValidateFunction | null = null;
    if (schema) {
      // Point into the document so relative `#/components/...` references resolve against it.
      const base = responses[code].$ref ? `reference${String(responses[code].$ref)}` : `reference#/paths/${pointerEscape(op.path)}/${op.method}/responses/${code}`;
      v = this.ajv.compile({ $ref: `${base}/content/application~1json/schema` });
    }
    this.compiled.set(id, v);
    return v;
  }
}

/**
 * `{ $ref, nullable: true }` (the reference writes it once, CallManagerGroupcall.source): OpenAPI 3.0
 * ignores a $ref's siblings and ajv refuses `nullable` without `type`; read as the author meant it,
 * the referenced schema or null.
 */
function nullableRefs(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(nullableRefs);
  if (!node || typeof node !== 'object') return;
  const obj = node as Json;
  if (typeof obj.$ref === 'string' && obj.nullable === true) {
    const ref = obj.$ref;
    delete obj.$ref;
    delete obj.nullable;
    obj.anyOf = [{ $ref: ref }, { type: 'null' }];
  }
  for (const v of Object.values(obj)) nullableRefs(v);
}

export function describeErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 8)
    .map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`)
    .join('; ');
}
