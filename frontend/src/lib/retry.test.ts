import { describe, expect, it } from "vitest";
import { RECONNECT_ATTEMPTS, RECONNECT_DELAY_MS, RetriesExhausted, withRetries } from "./retry";

function recorder() {
  const waits: number[] = [];
  const told: string[] = [];
  return {
    waits,
    told,
    sleep: async (ms: number) => void waits.push(ms),
    onRetry: (attempt: number, total: number) => void told.push(`${attempt}/${total}`),
  };
}

describe("withRetries", () => {
  it("reconnects five times five seconds apart by default, then gives up", async () => {
    const r = recorder();
    let calls = 0;
    const failing = async () => {
      calls++;
      throw new TypeError("Failed to fetch");
    };
    const outcome = withRetries(failing, { sleep: r.sleep, onRetry: r.onRetry });
    await expect(outcome).rejects.toBeInstanceOf(RetriesExhausted);
    expect(RECONNECT_ATTEMPTS).toBe(5);
    expect(RECONNECT_DELAY_MS).toBe(5000);
    expect(calls).toBe(5);
    expect(r.waits).toEqual([5000, 5000, 5000, 5000]);
    expect(r.told).toEqual(["1/5", "2/5", "3/5", "4/5"]);
  });

  it("returns the first success without waiting further", async () => {
    const r = recorder();
    let calls = 0;
    const flaky = async () => {
      calls++;
      if (calls < 3) throw new Error("agent unreachable");
      return "connected";
    };
    await expect(withRetries(flaky, { sleep: r.sleep })).resolves.toBe("connected");
    expect(r.waits).toEqual([5000, 5000]);
  });

  it("rethrows a fatal error at once", async () => {
    const r = recorder();
    class Refused extends Error {}
    const refused = async () => {
      throw new Refused("401");
    };
    const isFatal = (e: unknown) => e instanceof Refused;
    await expect(withRetries(refused, { sleep: r.sleep, isFatal })).rejects.toBeInstanceOf(Refused);
    expect(r.waits).toEqual([]);
  });
});
