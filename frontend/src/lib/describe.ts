// A dashboard's description in the person's language: the one the Superset sync writes
// ("Superset dashboard. Charts: A, B", backend/superset/sync.py) is worded by the client; a
// description someone wrote is shown as written.

import { t } from "./i18n/index.svelte";

const GENERATED = /^Superset dashboard(?:\. Charts: ([\s\S]*))?$/;

export function describe(dashboard: { description: string; source?: unknown }): string {
  const generated = dashboard.source ? GENERATED.exec(dashboard.description) : null;
  if (!generated) return dashboard.description;
  return generated[1] ? t("bi.supersetCharts", { charts: generated[1] }) : t("bi.supersetDashboard");
}
