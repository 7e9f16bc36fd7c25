import { describe, expect, it } from "vitest";
import { encodeOptions } from "./chat";
import { MODES, mode, requestDiagnosis, setMode, takeDiagnosisRequest } from "./mode.svelte";

describe("mode", () => {
  it("offers the contract's four modes, agent first", () => {
    expect(MODES).toEqual(["dynamic", "none", "yaml", "diagnose"]);
    expect(mode.current).toBe("dynamic");
  });

  it("is what a new message is sent with", () => {
    setMode("diagnose");
    expect(JSON.parse(encodeOptions({ mode: mode.current }))).toEqual({ mode: "diagnose" });
    setMode("dynamic");
  });

  it("hands a dashboard's diagnosis request to one panel, once", () => {
    requestDiagnosis({ text: "Why is dashboard #17 failing?" });
    expect(takeDiagnosisRequest()).toEqual({ text: "Why is dashboard #17 failing?" });
    expect(takeDiagnosisRequest()).toBeNull();
  });
});
