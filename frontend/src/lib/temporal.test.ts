import { describe, expect, it } from "vitest";
import { formatDateCell, isoOf, suggestKind, withTemporal, type ChartSpec } from "./chartspec";

const DAY = 86_400_000;
const nov3 = Date.UTC(2026, 10, 3);
// As Superset answers a time series ordered by its metric: epoch milliseconds, not in time order.
const superset: ChartSpec = {
  kind: "line",
  title: "Revenue per day",
  columns: ["ordered_at", "revenue"],
  rows: [
    [nov3, 40],
    [nov3 - 4 * DAY, 7],
    [nov3 - 3 * DAY, 2],
  ],
};

describe("temporal columns", () => {
  it("turns epoch milliseconds into dates and puts a time series in time order", () => {
    const spec = withTemporal(superset, ["ordered_at"]);
    expect(spec.rows).toEqual([
      ["2026-10-30", 7],
      ["2026-10-31", 2],
      ["2026-11-03", 40],
    ]);
    expect(suggestKind(spec.columns, spec.rows)).toBe("line"); // a date column, not a number
  });

  it("keeps a table's own order and leaves columns that are not temporal alone", () => {
    const table = withTemporal({ ...superset, kind: "table" }, ["ordered_at"]);
    expect(table.rows.map((r) => r[0])).toEqual(["2026-11-03", "2026-10-30", "2026-10-31"]);
    expect(withTemporal(superset, [])).toBe(superset);
  });

  it("keeps the time of day when there is one", () => {
    expect(isoOf(Date.UTC(2026, 10, 3, 14, 5))).toBe("2026-11-03T14:05:00.000Z");
  });

  it("reads a date in the person's locale, never as a number with separators", () => {
    expect(formatDateCell("2026-10-30", "en")).toBe("Oct 30, 2026");
    expect(formatDateCell("2026-10-30", "ru")).toMatch(/^30 окт\. 2026/);
  });
});
