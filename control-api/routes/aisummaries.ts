/** /aisummaries: voipbin's other path to the summaries (control-api/routes/summaries.ts). */
import { summaryRoutes } from './summaries';

export const routes = summaryRoutes('/aisummaries', 'AI');
