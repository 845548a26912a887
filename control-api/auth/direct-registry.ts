// Direct hashes (`direct.<hash>`) belong to resources built by later parts (AIs, AI teams, webchat widgets,
// extensions...). Each of those registers a resolver here; POST /auth/boot asks every resolver in turn.
// A resolver answers the resource the hash names, or null when the hash is not one of its own.

export interface DirectTarget {
  resource_type: string;
  resource_id: string;
  customer_id: string;
}

export interface DirectResolver {
  /** The resource types this resolver can return; only these may be booted. */
  resourceTypes: readonly string[];
  resolve(directHash: string): Promise<DirectTarget | null>;
  /**
   * Optional public display data of a resolved resource (spec: resource_data.public_display_config,
   * currently webchat_widget only). Must return only fields safe for anonymous visitors, or null.
   */
  publicDisplayConfig?(target: DirectTarget): Promise<Record<string, unknown> | null>;
}

/** Resource types a direct token may be issued for (spec: ai, ai_team, webchat_widget). */
export const BOOTABLE_RESOURCE_TYPES = ['ai', 'ai_team', 'webchat_widget'] as const;

export const DIRECT_PREFIX = 'direct.';

const resolvers = new Set<DirectResolver>();

/** Registers a resolver; returns a function that removes it again (tests, hot reload). */
export function registerDirectResolver(r: DirectResolver): () => void {
  resolvers.add(r);
  return () => {
    resolvers.delete(r);
  };
}

export interface ResolvedDirect {
  target: DirectTarget;
  resolver: DirectResolver;
}

/** The resource behind a direct hash, or null when no resolver knows it (or it resolves to a type we do not boot). */
export async function resolveDirectHash(directHash: string): Promise<ResolvedDirect | null> {
  for (const resolver of resolvers) {
    const target = await resolver.resolve(directHash);
    if (target && resolver.resourceTypes.includes(target.resource_type)) return { target, resolver };
  }
  return null;
}
