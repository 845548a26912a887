/** Builds /v1.0/openapi.json from the route definitions (the same zod schemas that validate). */
import { z } from 'zod';
import type { AnyRoute } from './route';

type Json = Record<string, unknown>;

function schemaOf(s: z.ZodType, io: 'input' | 'output'): Json {
  const out = z.toJSONSchema(s, { target: 'openapi-3.0', io, unrepresentable: 'any' }) as Json;
  delete out.$schema;
  return out;
}

function parametersOf(s: z.ZodType | undefined, where: 'path' | 'query'): Json[] {
  if (!s) return [];
  const js = schemaOf(s, 'input');
  const props = (js.properties ?? {}) as Record<string, Json>;
  const required = new Set((js.required ?? []) as string[]);
  return Object.entries(props).map(([name, schema]) => {
    const { description, ...rest } = schema;
    return { name, in: where, required: where === 'path' || required.has(name), ...(description ? { description } : {}), schema: rest };
  });
}

const PAGE_PARAMS: Json[] = [
  { name: 'page_size', in: 'query', required: false, description: 'Results per page (default and maximum 100).', schema: { type: 'integer', minimum: 1, maximum: 100 } },
  { name: 'page_token', in: 'query', required: false, description: 'next_page_token of the previous page (timestamp cursor).', schema: { type: 'string' } },
];

/**
 * One parameter per (location, name), as OpenAPI requires: a later declaration replaces an earlier
 * one. Paginated routes whose query schema also lists page_size/page_token (so the strict query
 * validation accepts them) are documented by PAGE_PARAMS, which is what parsePageQuery reads.
 */
function uniqueParameters(list: Json[]): Json[] {
  const byKey = new Map<string, Json>();
  for (const p of list) byKey.set(`${String(p.in)} ${String(p.name)}`, p);
  return [...byKey.values()];
}

const ERROR_RESPONSE: Json = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['status', 'reason', 'message', 'request_id'],
      properties: {
        status: {
          type: 'string',
          enum: ['INVALID_ARGUMENT', 'UNAUTHENTICATED', 'PAYMENT_REQUIRED', 'PERMISSION_DENIED', 'NOT_FOUND', 'ALREADY_EXISTS', 'FAILED_PRECONDITION', 'RESOURCE_EXHAUSTED', 'UNAVAILABLE', 'INTERNAL'],
        },
        reason: { type: 'string' },
        message: { type: 'string' },
        request_id: { type: 'string' },
        details: { type: 'array', items: { type: 'object', additionalProperties: true } },
      },
    },
  },
};

export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

export function buildOpenApi(routes: AnyRoute[], opts: { serverUrl: string }): Json {
  const paths: Record<string, Record<string, Json>> = {};
  const errRef = { $ref: '#/components/responses/Error' };
  // Two spellings of one path (/service_agents and /service-agents) camel-case alike: the later gets a suffix.
  const usedIds = new Set<string>();
  const uniqueId = (base: string) => {
    let id = base;
    for (let n = 2; usedIds.has(id); n++) id = n === 2 ? `${base}Alias` : `${base}Alias${n - 1}`;
    usedIds.add(id);
    return id;
  };
  for (const r of routes) {
    const p = openApiPath(r.path);
    const op: Json = {
      operationId: uniqueId(`${r.method}${p.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`),
      tags: [r.tag],
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      'x-permission': r.permission,
      ...(r.jwtOnly ? { 'x-jwt-only': true } : {}),
      parameters: uniqueParameters([...parametersOf(r.params, 'path'), ...parametersOf(r.query, 'query'), ...(r.paginated ? PAGE_PARAMS : [])]),
      responses: {
        [String(r.status ?? 200)]: r.responseContentTypes?.length
          ? {
              description: 'success',
              content: Object.fromEntries(r.responseContentTypes.map((t) => [t, { schema: { type: 'string' } }])),
              'x-record': schemaOf(r.response, 'output'),
            }
          : { description: 'success', content: { 'application/json': { schema: schemaOf(r.response, 'output') } } },
        '400': errRef,
        ...(r.permission === 'public' ? {} : { '401': errRef, '403': errRef, '429': errRef }),
        ...(r.params ? { '404': errRef } : {}),
        ...Object.fromEntries((r.errors ?? []).map((s) => [String(s), errRef])),
        '500': errRef,
      },
      ...(r.permission === 'public' ? { security: [] } : {}),
    };
    if (r.rawBody) {
      const types = r.contentTypes?.length ? r.contentTypes : ['application/octet-stream'];
      op.requestBody = { required: true, content: Object.fromEntries(types.map((t) => [t, { schema: { type: 'string', format: 'binary' } }])) };
    } else if (r.body) op.requestBody = { required: true, content: { 'application/json': { schema: schemaOf(r.body, 'input') } } };
    (paths[p] ??= {})[r.method] = op;
  }
  return {
    openapi: '3.0.3',
    info: { title: 'Communications Platform API', version: '1.0.0' },
    servers: [{ url: opts.serverUrl }],
    security: [{ bearer: [] }, { tokenQuery: [] }, { tokenCookie: [] }, { accesskey: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        tokenQuery: { type: 'apiKey', in: 'query', name: 'token' },
        tokenCookie: { type: 'apiKey', in: 'cookie', name: 'token' },
        accesskey: { type: 'apiKey', in: 'query', name: 'accesskey' },
      },
      schemas: { ErrorResponse: ERROR_RESPONSE },
      responses: { Error: { description: 'error envelope', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } } } },
    },
  };
}
