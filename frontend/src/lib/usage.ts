// Usage tables: their columns and the CSV export (pure functions; the server sorts and pages).

import type { AdminUsageItem, UsageGroup, UsageSortKey } from "./api/rest";

export type SortKey = UsageSortKey;

/** The columns of the admin table for a grouping, in order. */
export function columns(group: UsageGroup): SortKey[] {
  const key: SortKey[] = group === "day" ? ["day"] : group === "model" ? ["model"] : [];
  return ["username", ...key, "input_tokens", "output_tokens", "total_tokens", "model_calls"];
}

function cell(value: unknown): string {
  const text = value === null || value === undefined ? "" : String(value);
  // Quote what a spreadsheet would split, and defuse formulas (=, +, -, @ at the start).
  const safe = /^[=+\-@]/.test(text) ? `'${text}` : text;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The rows as CSV (a header line, then one line per item; CRLF as RFC 4180 says). */
export function toCsv(items: AdminUsageItem[], group: UsageGroup): string {
  const keys = ["user_id", ...columns(group), "estimated_calls"] as const;
  const lines = [keys.join(",")];
  for (const item of items) lines.push(keys.map((k) => cell(item[k as keyof AdminUsageItem])).join(","));
  return lines.join("\r\n") + "\r\n";
}
