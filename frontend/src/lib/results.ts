// Reading tool outputs (untrusted JSON from the stream or the history) into the shapes the
// result views draw; anything unexpected gives null, and the card shows only its raw JSON.

import { type Cell } from "./chartspec";

export type ResultView =
  | { kind: "sql"; datasource: string; columns: string[]; rows: Cell[][]; truncated: boolean }
  | {
      kind: "health";
      dashboardId: number | null;
      status: string;
      charts: { chart_key: string; chart_title?: string; status: string; message?: string }[];
    }
  | { kind: "file"; key: string; content: string; note?: string };

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const asCell = (v: unknown): Cell =>
  v === null || typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v))
    ? v
    : JSON.stringify(v);

function sql(input: unknown, output: Record<string, unknown>): ResultView | null {
  const { columns, rows } = output;
  if (!Array.isArray(columns) || !Array.isArray(rows)) return null;
  const names = columns.map(String);
  const table = rows.filter(Array.isArray).map((row) => names.map((_, i) => asCell(row[i] ?? null)));
  const datasource = isRecord(input) && typeof input.datasource === "string" ? input.datasource : "";
  const truncated = output.truncated === true || typeof output.note === "string";
  return { kind: "sql", datasource, columns: names, rows: table, truncated };
}

function health(output: Record<string, unknown>): ResultView | null {
  const run = isRecord(output.latest_run) ? output.latest_run : null;
  const charts = (Array.isArray(run?.charts) ? run.charts : []).filter(isRecord).map((c) => ({
    chart_key: String(c.chart_key ?? ""),
    chart_title: typeof c.chart_title === "string" ? c.chart_title : undefined,
    status: String(c.status ?? "unknown"),
    message: typeof c.message === "string" ? c.message : undefined,
  }));
  const id = typeof output.dashboard_id === "number" ? output.dashboard_id : null;
  return { kind: "health", dashboardId: id, status: String(output.status ?? "unknown"), charts };
}

function file(input: unknown, output: Record<string, unknown>): ResultView | null {
  if (typeof output.content !== "string") return null;
  const key = typeof output.key === "string" ? output.key : isRecord(input) ? String(input.key ?? "") : "";
  const note = typeof output.note === "string" ? output.note : undefined;
  return { kind: "file", key, content: output.content, note };
}

/** The view of a tool's output, or null when it has none (or the output is not as expected). */
export function readResult(tool: string, input: unknown, output: unknown): ResultView | null {
  if (!isRecord(output) || "error" in output) return null;
  if (tool === "execute_sql") return sql(input, output);
  if (tool === "dashboard_health") return health(output);
  if (tool === "read_file") return file(input, output);
  return null;
}
