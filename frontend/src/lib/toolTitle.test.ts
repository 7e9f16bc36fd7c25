import { describe, expect, it } from "vitest";
import { en } from "./i18n/en";
import { ru } from "./i18n/ru";
import { TOOLS } from "./codes";
import { toolTitleKey } from "./toolTitle";

describe("tool card headings", () => {
  it("say what runs while it runs, and what it was once done or failed", () => {
    expect(en[toolTitleKey("query_logs", "pending")!]).toBe("Searching the logs");
    expect(en[toolTitleKey("query_logs", "done")!]).toBe("Logs");
    expect(toolTitleKey("query_logs", "error")).toBe(toolTitleKey("query_logs", "done"));
    expect(ru[toolTitleKey("deploy_dashboard", "pending")!]).toBe("Развёртываю дашборд");
  });

  it("exist for every tool of the agent in both languages", () => {
    for (const tool of TOOLS) {
      for (const phase of ["pending", "done"] as const) {
        const key = toolTitleKey(tool, phase);
        expect(key, `${tool} ${phase}`).not.toBeNull();
        expect(en[key!]).not.toBe(ru[key!]);
      }
    }
  });

  it("are absent for a tool the client does not know (the server's title is shown)", () => {
    expect(toolTitleKey("some_new_tool", "pending")).toBeNull();
  });
});
