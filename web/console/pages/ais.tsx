/**
 * AI configurations (GET /ais): the list, each linked to its version history (ai-versions.tsx,
 * docs/evals.md "Agent versions"). #/ais/<id>[/versions[/<number>]] is that history.
 */
import { api, type Ai } from '../api';
import { ErrorLine, Section, Table, shortTime, useLoad } from '../components/common';
import { href } from '../router';
import { AiVersionsPage } from './ai-versions';

export function AisRoute({ path }: { path: string[] }) {
  const [id, sub, number] = path;
  if (!id) return <AisPage />;
  if (sub !== undefined && sub !== 'versions') return <p class="empty">Not found.</p>;
  return <AiVersionsPage key={id} id={id} number={number === undefined ? undefined : Number(number)} />;
}

function AisPage() {
  const ais = useLoad(() => api.all<Ai>('/ais'));
  return (
    <Section title="AI agents">
      <ErrorLine error={ais.error} />
      <Table
        label="AI agents"
        rows={ais.data ?? []}
        rowKey={(a) => a.id}
        empty={ais.loading ? 'Loading…' : 'No AI configurations yet (POST /v1.0/ais).'}
        columns={[
          {
            title: 'Name',
            cell: (a) => (
              <a href={href('ais', a.id, 'versions')} data-field="name">
                {a.name || a.id.slice(0, 8)}
              </a>
            ),
          },
          { title: 'Detail', cell: (a) => a.detail },
          { title: 'Model', cell: (a) => a.engine_model },
          { title: 'Updated', cell: (a) => shortTime(a.tm_update) },
        ]}
      />
    </Section>
  );
}
