import { describe, expect, it } from "vitest";
import { HEADER, keyedFetch, newKey } from "./idempotency";

const base = "http://localhost";
const noSleep = () => Promise.resolve();

function recorder(answers: (number | Error)[]) {
  const seen: { method: string; key: string | null; body: string }[] = [];
  const send = async (request: Request) => {
    seen.push({ method: request.method, key: request.headers.get(HEADER), body: await request.text() });
    const next = answers.shift() ?? 200;
    if (next instanceof Error) throw next;
    return new Response("{}", { status: next });
  };
  return { seen, send };
}

describe("newKey", () => {
  it("is a UUID v4 without crypto.randomUUID too (plain http is not a secure context)", () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(newKey()).toMatch(uuid);
    const original = crypto.randomUUID;
    Object.defineProperty(crypto, "randomUUID", { value: undefined, configurable: true });
    try {
      const keys = new Set(Array.from({ length: 50 }, newKey));
      expect(keys.size).toBe(50);
      for (const key of keys) expect(key).toMatch(uuid);
    } finally {
      Object.defineProperty(crypto, "randomUUID", { value: original, configurable: true });
    }
  });
});

describe("keyedFetch", () => {
  it("gives each write its own key and a read none", async () => {
    let n = 0;
    const { seen, send } = recorder([]);
    const keyed = keyedFetch(send, { newKey: () => `k${++n}`, sleep: noSleep });
    await keyed(new Request(`${base}/api/assistant/conversations`, { method: "POST", body: "{}" }));
    await keyed(new Request(`${base}/api/assistant/conversations/1`, { method: "DELETE" }));
    await keyed(new Request(`${base}/api/assistant/conversations`));
    expect(seen.map((s) => s.key)).toEqual(["k1", "k2", null]);
  });

  it("sends a write again with the same key and body after a 502 or a network error", async () => {
    const { seen, send } = recorder([502, new TypeError("Failed to fetch"), 201]);
    const keyed = keyedFetch(send, { newKey: () => "once", sleep: noSleep });
    const body = JSON.stringify({ title: "Q3" });
    const answer = await keyed(new Request(`${base}/api/assistant/conversations`, { method: "POST", body }));
    expect(answer.status).toBe(201);
    expect(seen).toEqual([
      { method: "POST", key: "once", body },
      { method: "POST", key: "once", body },
      { method: "POST", key: "once", body },
    ]);
  });

  it("keeps a key the caller chose, and gives up after the last try", async () => {
    const { seen, send } = recorder([503, 503, 503, 201]);
    const keyed = keyedFetch(send, { sleep: noSleep });
    const request = new Request(`${base}/api/x`, { method: "PUT", body: "1", headers: { [HEADER]: "mine" } });
    expect((await keyed(request)).status).toBe(503);
    expect(seen.map((s) => s.key)).toEqual(["mine", "mine", "mine"]);
  });

  it("does not send again a refusal or an aborted request", async () => {
    const refused = recorder([409]);
    await keyedFetch(refused.send, { sleep: noSleep })(new Request(`${base}/api/x`, { method: "POST", body: "" }));
    expect(refused.seen).toHaveLength(1);
    const aborted = recorder([new DOMException("aborted", "AbortError")]);
    await expect(
      keyedFetch(aborted.send, { sleep: noSleep })(new Request(`${base}/api/x`, { method: "POST", body: "" })),
    ).rejects.toThrow("aborted");
    expect(aborted.seen).toHaveLength(1);
  });
});
