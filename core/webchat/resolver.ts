/**
 * The webchat widget's direct hash for POST /auth/boot: resolves an active widget and gives its
 * public display configuration (name and theme only; never flow ids or the hash itself).
 */
import type { Db } from '../db/knex';
import { publicDisplayConfig, webchatRepo } from './repo';

export interface WidgetTarget {
  resource_type: string;
  resource_id: string;
  customer_id: string;
}

export function webchatDirectResolver(db: Db) {
  return {
    resourceTypes: ['webchat_widget'] as const,
    async resolve(hash: string): Promise<WidgetTarget | null> {
      const w = await webchatRepo(db).widgetByHash(hash);
      if (!w || w.status !== 'active') return null;
      return { resource_type: 'webchat_widget', resource_id: w.id, customer_id: w.customer_id };
    },
    async publicDisplayConfig(t: WidgetTarget): Promise<Record<string, unknown> | null> {
      if (t.resource_type !== 'webchat_widget') return null;
      const w = await webchatRepo(db).getWidget(t.customer_id, t.resource_id);
      return w ? publicDisplayConfig(w) : null;
    },
  };
}
