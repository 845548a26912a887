/**
 * An AI version's who and what (docs/evals.md "Agent versions"): the maker named from what this agent
 * may read (the agents list; the access keys for an admin), else its kind and id; and the version's
 * configuration field by field, the fields it changed marked. Values are text nodes (keys come masked).
 */
import { api, canAdmin, type Accesskey, type Agent, type AiVersion } from '../api';
import { useLoad } from './common';

export interface Makers {
  name(by: AiVersion['created_by']): string;
  /** why names could not be read ('' when they could) */
  error: string;
}

/** Reads who may have made versions: every agent, and the access keys when this agent is an admin (the route is the admin's). */
export function useMakers(me: Agent): Makers {
  const agents = useLoad(() => api.all<Agent>('/agents'));
  const keys = useLoad(() => (canAdmin(me) ? api.all<Accesskey>('/accesskeys') : Promise.resolve(null)));
  const errors = [agents.error && `The agents: ${agents.error}`, keys.error && `The access keys: ${keys.error}`].filter(Boolean);
  return {
    error: errors.join(' · '),
    name(by) {
      switch (by.type) {
        case 'system':
          return 'the platform';
        case 'agent':
        case 'delegate': {
          if (by.id === me.id) return `${me.username} (you)`;
          const a = agents.data?.find((x) => x.id === by.id);
          return a ? `${by.type === 'delegate' ? 'delegate of ' : ''}${a.username}` : `${by.type} ${by.id.slice(0, 8)}`;
        }
        case 'accesskey': {
          const k = keys.data?.find((x) => x.id === by.id);
          return k ? `access key “${k.name || k.id.slice(0, 8)}”` : `access key ${by.id.slice(0, 8)}`;
        }
        case 'direct':
          return `direct ${by.id.slice(0, 8)}`;
      }
    },
  };
}

const shown = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));

/** The configuration of one version, every field, those it changed from the one before marked. */
export function VersionConfig({ version }: { version: AiVersion }) {
  const entries = Object.entries(version.config).sort(([a], [b]) => a.localeCompare(b));
  return (
    <dl class="facts version-config" aria-label={`Version ${version.number}`}>
      {entries.map(([k, v]) => {
        // version 1 made every field: none is marked
        const changed = version.number > 1 && version.changed.includes(k);
        return (
          <>
            <dt class={changed ? 'changed' : undefined} data-key={k}>
              {k}
              {changed && <span class="badge changed-mark">changed</span>}
            </dt>
            <dd class={changed ? 'changed' : undefined} data-value={k}>
              {typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v === null ? String(v) : <pre class="code">{shown(v)}</pre>}
            </dd>
          </>
        );
      })}
    </dl>
  );
}
