/**
 * A conformance step: one reference operation sent once, with a request built from the state the
 * earlier steps left (ids of prerequisites created through the API). `crud` spells the usual five
 * operations of a collection in the order a client would use them.
 */
import type { LiveParties } from './live';

export type State = Record<string, string>;

export interface Step {
  /** The reference operation, `method /path/{param}` in the reference's spelling. */
  op: string;
  /** The concrete path under /v1.0 (defaults to `op`'s path when it has no parameter). */
  url?: (s: State) => string;
  query?: (s: State) => Record<string, string>;
  body?: (s: State) => unknown;
  /** A multipart/form-data request instead of JSON: text fields and one file part. */
  multipart?: (s: State) => { fields: Record<string, string>; file: { field: string; name: string; type: string; content: Buffer } };
  /** Live prerequisites made before the step is sent (sipp parties the platform dials: live.ts). */
  prepare?: (s: State, live: LiveParties) => Promise<void>;
  /** Polls GET `url` (as the same caller) until `done` holds before the step is sent: async work to finish. */
  until?: { url: (s: State) => string; done: (body: Record<string, unknown>) => boolean };
  /** Keeps what later steps need from a 2xx body (e.g. s.flow = body.id). */
  save?: (s: State, body: Record<string, unknown>) => void;
  /**
   * A known difference from the reference, with its reason (docs/api-fidelity.md lists it): the
   * step must still differ, and in the way `shows` describes, so a difference that goes away (or
   * another one that appears) is noticed.
   */
  differs?: Known;
  /** The operation is sent again (a second prerequisite): checked, but covered by its first step. */
  again?: true;
  /** Sent as the platform's ProjectSuperAdmin (providers, routes) or a second agent of the customer, instead of its admin. */
  as?: 'superadmin' | 'peer';
}

export interface Known {
  reason: string;
  /** Matches the difference the runner reports (`status ...` or `body does not match ...`). */
  shows: RegExp;
}

export interface CrudSpec {
  /** Collection path, e.g. `/flows`; the item path is `${collection}/{id}`. */
  collection: string;
  /** State key the created id is saved under. */
  name: string;
  create: (s: State) => unknown;
  update?: (s: State) => unknown;
  /** Steps on the created item, run between PUT and DELETE. */
  extra?: Step[];
  /** Known differences by operation key. */
  differs?: Record<string, Known>;
  /** Leaves the item in place (it is a prerequisite of later scenarios). */
  keep?: boolean;
  as?: 'superadmin';
}

export function crud(c: CrudSpec): Step[] {
  const item = (s: State) => `${c.collection}/${s[c.name]}`;
  const d = (op: string) => ({ ...(c.differs?.[op] ? { differs: c.differs[op] } : {}), ...(c.as ? { as: c.as } : {}) });
  const post = `post ${c.collection}`;
  const steps: Step[] = [
    {
      op: post,
      body: c.create,
      save: (s, b) => {
        s[c.name] = String(b.id);
      },
      ...d(post),
    },
    { op: `get ${c.collection}`, ...d(`get ${c.collection}`) },
    { op: `get ${c.collection}/{id}`, url: item, ...d(`get ${c.collection}/{id}`) },
  ];
  if (c.update) steps.push({ op: `put ${c.collection}/{id}`, url: item, body: c.update, ...d(`put ${c.collection}/{id}`) });
  steps.push(...(c.extra ?? []));
  if (!c.keep) steps.push({ op: `delete ${c.collection}/{id}`, url: item, ...d(`delete ${c.collection}/{id}`) });
  return steps;
}
