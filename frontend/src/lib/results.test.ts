import { describe, expect, it } from "vitest";
import { markWords } from "./marks";
import { readResult } from "./results";

describe("readResult", () => {
  it("reads an execute_sql output into a table, odd cells made text", () => {
    const view = readResult(
      "execute_sql",
      { datasource: "sample", query: "select 1" },
      { columns: ["a", "b"], rows: [[1, { x: 1 }], [2]], truncated: true },
    );
    expect(view).toEqual({
      kind: "sql",
      datasource: "sample",
      columns: ["a", "b"],
      rows: [
        [1, '{"x":1}'],
        [2, null],
      ],
      truncated: true,
    });
  });

  it("reads dashboard health charts and file contents", () => {
    const health = readResult("dashboard_health", {}, {
      dashboard_id: 17,
      status: "failing",
      latest_run: { charts: [{ chart_key: "c", status: "failing", message: "no such column" }] },
    });
    expect(health).toMatchObject({ kind: "health", dashboardId: 17, charts: [{ chart_key: "c" }] });
    const file = readResult("read_file", { key: "a.csv" }, { content: "x,y\n1,2" });
    expect(file).toEqual({ kind: "file", key: "a.csv", content: "x,y\n1,2", note: undefined });
  });

  it("gives nothing for errors, other tools and unexpected shapes", () => {
    expect(readResult("execute_sql", {}, { error: { code: "SQL_ERROR" } })).toBeNull();
    expect(readResult("execute_sql", {}, "text")).toBeNull();
    expect(readResult("execute_sql", {}, { columns: "a" })).toBeNull();
    expect(readResult("get_dashboard", {}, { id: 42 })).toBeNull();
  });
});

describe("markWords", () => {
  it("marks the words searched for as prefixes, in any case, and nothing else", () => {
    expect(markWords("Дашборды и dashboard-42", "дашборд DASH")).toEqual([
      { text: "Дашборды", mark: true },
      { text: " и ", mark: false },
      { text: "dashboard", mark: true },
      { text: "-42", mark: false },
    ]);
    expect(markWords("a.b (c)", "(.)")).toEqual([{ text: "a.b (c)", mark: false }]);
  });
});
