/** Bounds that keep a bad flow from spinning or growing without end. */
export interface FlowLimits {
  /** Actions executed by one activeflow before it is ended (voipbin uses 100; ours is configurable). */
  maxExecutedActions: number;
  /** Upper bound on a goto's loop_count, whatever the flow asks for. */
  maxLoopCount: number;
  /** Activeflows in one on_complete_flow_id chain (voipbin: 5). */
  maxCompleteChain: number;
  /** Depth of pushed action lists (fetch, fetch_flow). */
  maxStackDepth: number;
  /** Timeout of fetch and sync webhook_send requests, ms. */
  httpTimeoutMs: number;
  /** Largest fetch response body, bytes. */
  maxFetchBytes: number;
}

export const DEFAULT_LIMITS: FlowLimits = {
  maxExecutedActions: 1000,
  maxLoopCount: 100,
  maxCompleteChain: 5,
  maxStackDepth: 10,
  httpTimeoutMs: 10_000,
  maxFetchBytes: 1024 * 1024,
};
