// What a deploy_dashboard confirmation will do, in words: the dashboard's title, the version the
// ref names, where it comes from and where it goes, and whether that version fails validation
// (read from the dashboard as the backend reports it; the card shows it before Confirm).

import type { Dashboard, Health } from "./api/rest";

export type Source = { kind: "main" } | { kind: "branch"; name: string } | { kind: "version" };

export interface DeployPreview {
  title: string;
  version: number | null;
  source: Source;
  environment: string;
  /** The named version's latest validation: "failing" warns before Confirm. */
  status: string;
  failingCharts: string[];
}

export interface DeployArgs {
  dashboard_id?: unknown;
  ref?: unknown;
  environment?: unknown;
}

/** The version `ref` names and its latest known validation status ("unknown" when none). */
function target(dashboard: Dashboard, ref: string): { version: number | null; source: Source; status: string } {
  if (ref === "main") return { version: dashboard.main_version_id, source: { kind: "main" }, status: dashboard.status };
  const branch = dashboard.branches.find((b) => b.name === ref);
  const version = branch ? branch.head_version_id : /^\d+$/.test(ref) ? Number(ref) : null;
  const source: Source = branch ? { kind: "branch", name: branch.name } : { kind: "version" };
  if (version !== null && version === dashboard.main_version_id) return { version, source, status: dashboard.status };
  const served = Object.values(dashboard.environments).find((env) => env && env.version_id === version);
  return { version, source, status: served?.status ?? "unknown" };
}

export function deployPreview(dashboard: Dashboard, args: DeployArgs, health?: Health | null): DeployPreview {
  const ref = typeof args.ref === "string" ? args.ref : "main";
  const { version, source, status } = target(dashboard, ref);
  const run = health?.latest_run;
  const failingCharts =
    status === "failing" && run && run.version_id === version
      ? run.charts.filter((c) => c.status === "failing").map((c) => c.chart_title)
      : [];
  return {
    title: dashboard.title,
    version,
    source,
    environment: typeof args.environment === "string" ? args.environment : "?",
    status,
    failingCharts,
  };
}
