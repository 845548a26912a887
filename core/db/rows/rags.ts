/** Row types of core/repos/rags.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export interface RagRow {
  id: string;
  customer_id: string;
  name: string;
  description: string;
  status: 'processing' | 'ready';
  tm_create: Date;
  tm_update: Date | null;
}

export interface RagSourceRow {
  id: string;
  customer_id: string;
  rag_id: string;
  storage_file_id: string | null;
  source_url: string | null;
  status: 'pending' | 'ready' | 'error';
  status_message: string;
  tm_create: Date;
  tm_update: Date | null;
}
