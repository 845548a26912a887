/**
 * Persistence behind two small interfaces: the activeflow records the runner writes, and the flows
 * it reads (fetch_flow, on_complete_flow_id, call.flow_id). In-memory versions serve the simulator
 * and tests; the Postgres ones live with the repositories.
 */
import type { FlowDefinition } from '../../core/flow';
import type { ActiveflowRecord } from './record';

export interface ActiveflowStore {
  create(record: ActiveflowRecord): Promise<void>;
  update(record: ActiveflowRecord): Promise<void>;
  get(id: string): Promise<ActiveflowRecord | undefined>;
  /** Newest first, not deleted, tm_create strictly before `before` when given. */
  list(opts: { customer_id?: string; limit: number; before?: string }): Promise<ActiveflowRecord[]>;
}

export interface FlowStore {
  /** A flow that exists and is not deleted, for this customer; undefined otherwise. */
  get(id: string, customerId: string): Promise<FlowDefinition | undefined>;
}

export class InMemoryActiveflowStore implements ActiveflowStore {
  private readonly rows = new Map<string, ActiveflowRecord>();

  async create(record: ActiveflowRecord): Promise<void> {
    if (this.rows.has(record.id)) throw new Error(`activeflow ${record.id} already exists`);
    this.rows.set(record.id, record);
  }

  async update(record: ActiveflowRecord): Promise<void> {
    this.rows.set(record.id, record);
  }

  async get(id: string): Promise<ActiveflowRecord | undefined> {
    return this.rows.get(id);
  }

  async list(opts: { customer_id?: string; limit: number; before?: string }): Promise<ActiveflowRecord[]> {
    return [...this.rows.values()]
      .filter((r) => r.tm_delete === null)
      .filter((r) => !opts.customer_id || r.customer_id === opts.customer_id)
      .filter((r) => !opts.before || r.tm_create < opts.before)
      .sort((a, b) => (a.tm_create < b.tm_create ? 1 : a.tm_create > b.tm_create ? -1 : 0))
      .slice(0, opts.limit);
  }
}

export class InMemoryFlowStore implements FlowStore {
  private readonly flows = new Map<string, { flow: FlowDefinition; customerId: string }>();

  put(flow: FlowDefinition, customerId = ''): void {
    this.flows.set(flow.id, { flow, customerId });
  }

  async get(id: string, customerId: string): Promise<FlowDefinition | undefined> {
    const row = this.flows.get(id);
    if (!row) return undefined;
    if (row.customerId && customerId && row.customerId !== customerId) return undefined;
    return row.flow;
  }
}
