// Runs outlive the page (CONTRACT.md): attach on open, Stop as `action: "stop"`, re-attach
// after a dropped stream, RUN_INTERRUPTED. @gradio/client and the REST calls are scripted.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

type Event =
  | { type: "data"; data: unknown[] }
  | { type: "status"; stage: "complete" | "error"; message?: string; broken?: boolean };

/** A Gradio job the test drives: events are pushed, the page iterates them. */
class FakeJob {
  readonly queue: Event[] = [];
  #wake: (() => void) | null = null;
  #ended = false;
  readonly cancel = vi.fn(async () => this.end());

  constructor(readonly payload: Record<string, unknown>) {}

  get action(): unknown {
    return this.payload.action;
  }

  push(...events: Event[]): void {
    this.queue.push(...events);
    this.#wake?.();
  }

  data(...messages: Record<string, unknown>[]): void {
    this.push({ type: "data", data: [messages] });
  }

  complete(): void {
    this.push({ type: "status", stage: "complete" });
  }

  drop(): void {
    this.push({ type: "status", stage: "error", message: "Connection errored out.", broken: true });
  }

  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Event> {
    for (;;) {
      const next = this.queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.#ended) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = null;
    }
  }
}

const agent = vi.hoisted(() => ({
  jobs: [] as unknown[],
  connects: [] as number[],
  /** Answers each connect: resolve (undefined) or a rejection. */
  refuse: 0,
  /** Called with each new job, to script it. */
  onSubmit: (_job: unknown) => {},
}));

vi.mock("@gradio/client", () => ({
  handle_file: (file: unknown) => file,
  Client: {
    connect: vi.fn(async () => {
      agent.connects.push(Date.now());
      if (agent.refuse > 0) {
        agent.refuse--;
        throw new TypeError("Failed to fetch");
      }
      return {
        close: () => {},
        submit: (_endpoint: string, payload: Record<string, unknown>) => {
          const job = new FakeJob(payload);
          agent.jobs.push(job);
          agent.onSubmit(job);
          return job;
        },
      };
    }),
  },
}));

vi.mock("./api/rest", () => ({ history: vi.fn(), isActive: vi.fn() }));

const rest = await import("./api/rest");
const { Thread } = await import("./thread.svelte");
const { closeAllChannels } = await import("./chat");
const { resumeDelays } = await import("./retry");

const history = vi.mocked(rest.history);
const isActive = vi.mocked(rest.isActive);

const jobs = () => agent.jobs as FakeJob[];
const jobsOf = (action: string) => jobs().filter((j) => j.action === action);
const text = (content: string, extra: Record<string, unknown> = {}) => ({
  role: "assistant",
  content,
  metadata: extra,
});
const created_at = "2026-01-01T00:00:00Z";
const userRow = (id: number, content: string) => ({ id, role: "user", content, metadata: {}, created_at });
const question = userRow(1, "Tell me");
const answerRow = (id: number, content: string) => ({
  id,
  role: "assistant",
  content,
  metadata: { parts: [text(content, { message_id: id })] },
  created_at,
});

/** Let queued promises and `ms` of fake time run. */
const flush = (ms = 0) => vi.advanceTimersByTimeAsync(ms);

async function until(test: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !test(); i++) await flush(1);
  if (!test()) throw new Error(`timed out waiting for ${what}`);
}

let seq = 0;
let id = "";

beforeEach(() => {
  vi.useFakeTimers();
  vi.stubGlobal("window", Object.assign(new EventTarget(), { location: { origin: "http://page" } }));
  agent.jobs = [];
  agent.connects = [];
  agent.refuse = 0;
  agent.onSubmit = () => {};
  history.mockReset().mockResolvedValue([question]);
  isActive.mockReset().mockResolvedValue(false);
  id = `conv-${++seq}`;
});

afterEach(() => {
  closeAllChannels();
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe("opening a conversation", () => {
  it("attaches to its live run and shows the turn going on, Stop available", async () => {
    isActive.mockResolvedValue(true);
    const thread = new Thread(id);
    await thread.load();
    await until(() => jobsOf("attach").length === 1, "the attach");
    const attach = jobsOf("attach")[0];
    expect(attach.payload).toMatchObject({ conversation_id: id, action: "attach", options: "" });
    expect(thread.streaming).toBe(true); // the composer shows Stop

    const card = { type: "tool_start", tool: "get_dashboard", call_id: "c1", status: "pending" };
    attach.data(text("", card), text("Dashboard 42 is"));
    await until(() => thread.live.length === 2, "the turn so far");
    expect(thread.live.map((i) => i.metadata.type ?? "text")).toEqual(["tool_start", "text"]);

    history.mockResolvedValue([question, answerRow(9, "Dashboard 42 is fine.")]);
    attach.data(text("Dashboard 42 is fine.", { message_id: 9 }));
    attach.complete();
    await until(() => !thread.streaming, "the end of the turn");
    // It ends as the stored turn (the question may have been stored after the page read it).
    expect(thread.items.map((i) => i.content)).toEqual(["Tell me", "Dashboard 42 is fine."]);
    expect(thread.banner).toBeNull();
    expect(jobsOf("").length).toBe(0); // nothing was sent
  });

  it("opens as before when no run is live", async () => {
    const thread = new Thread(id);
    await thread.load();
    await flush(10);
    expect(isActive).toHaveBeenCalledWith(id);
    expect(jobs()).toEqual([]);
    expect(thread.streaming).toBe(false);
    expect(thread.items.map((i) => i.content)).toEqual(["Tell me"]);
  });

  it("attaches when opened again from the list while a run answers in it", async () => {
    const thread = new Thread(id);
    await thread.load();
    isActive.mockResolvedValue(true); // another tab sent a message meanwhile
    history.mockResolvedValue([question, userRow(2, "From the other tab")]);
    const rejoined = thread.rejoin();
    await until(() => jobsOf("attach").length === 1, "the attach");
    expect(thread.items.at(-1)?.content).toBe("From the other tab");
    expect(thread.streaming).toBe(true);
    jobsOf("attach")[0].complete();
    await rejoined;
    expect(thread.streaming).toBe(false);
  });

  it("shows the stored answer when the run ended before the attach (NO_ACTIVE_RUN)", async () => {
    isActive.mockResolvedValue(true);
    agent.onSubmit = (job) => {
      const j = job as FakeJob;
      history.mockResolvedValue([question, answerRow(9, "All done.")]);
      j.data({ role: "assistant", content: "", metadata: { type: "notice", code: "NO_ACTIVE_RUN", message: "" } });
      j.complete();
    };
    const thread = new Thread(id);
    await thread.load();
    await until(() => history.mock.calls.length === 2 && !thread.streaming, "the history reload");
    expect(thread.items.map((i) => i.content)).toEqual(["Tell me", "All done."]);
    expect(thread.items.some((i) => i.metadata.type === "notice")).toBe(false);
    expect(thread.banner).toBeNull();
  });
});

describe("Stop", () => {
  async function running() {
    const thread = new Thread(id);
    await thread.load();
    const sent = thread.send("Write a long report", []);
    await until(() => jobsOf("").length === 1, "the turn");
    const turn = jobsOf("")[0];
    turn.data(text("t0 t1 t2"));
    await until(() => thread.live.length === 1, "the first words");
    return { thread, turn, sent };
  }

  it("sends action stop for the conversation; the run's own stream ends with the partial text", async () => {
    const { thread, turn, sent } = await running();
    agent.onSubmit = (job) => {
      const stop = job as FakeJob;
      stop.complete();
      turn.data(text("t0 t1 t2 t3")); // the run stops within a second, its stream ends
      turn.complete();
    };
    await thread.stop();
    await sent;
    const stop = jobsOf("stop");
    expect(stop.length).toBe(1);
    expect(stop[0].payload).toMatchObject({ conversation_id: id, action: "stop", focus: "", options: "" });
    expect(turn.cancel).not.toHaveBeenCalled(); // Gradio's cancel would end every job of the client
    expect(thread.streaming).toBe(false);
    expect(thread.stopped).toBe(true);
    expect(thread.items.at(-1)?.content).toBe("t0 t1 t2 t3");
  });

  it("falls back to cancelling the job when the stop request fails", async () => {
    const { thread, turn, sent } = await running();
    agent.onSubmit = (job) => (job as FakeJob).push({ type: "status", stage: "error", message: "boom" });
    await thread.stop();
    await sent;
    expect(jobsOf("stop").length).toBe(1);
    expect(turn.cancel).toHaveBeenCalled();
    expect(thread.stopped).toBe(true);
    expect(thread.streaming).toBe(false);
    expect(thread.items.at(-1)?.content).toBe("t0 t1 t2");
  });

  it("cancels a stream that does not end after the stop was taken", async () => {
    const { thread, turn, sent } = await running();
    agent.onSubmit = (job) => (job as FakeJob).complete();
    const stopping = thread.stop();
    await flush(2500);
    await stopping;
    await sent;
    expect(turn.cancel).toHaveBeenCalled();
    expect(thread.streaming).toBe(false);
  });
});

describe("a dropped stream", () => {
  async function dropped() {
    const thread = new Thread(id);
    await thread.load();
    const sent = thread.send("Tell me slowly", []);
    await until(() => jobsOf("").length === 1, "the turn");
    const turn = jobsOf("")[0];
    turn.data(text("slow slow"));
    await until(() => thread.live.length === 1, "the first words");
    turn.drop();
    await until(() => thread.banner?.kind === "reattaching", "the reconnecting state");
    return { thread, sent };
  }

  it("re-attaches by itself and the answer goes on", async () => {
    const { thread, sent } = await dropped();
    expect(thread.streaming).toBe(true); // Stop stays available
    expect(thread.banner).toMatchObject({ kind: "reattaching", attempt: 1 });
    agent.onSubmit = (job) => {
      const j = job as FakeJob;
      j.data(text("slow slow slow"));
      j.data(text("slow slow slow slow", { message_id: 4 }));
      j.complete();
    };
    history.mockResolvedValue([
      question,
      userRow(3, "Tell me slowly"),
      answerRow(4, "slow slow slow slow"),
    ]);
    await flush(500);
    await sent;
    expect(jobsOf("attach")[0].payload).toMatchObject({ conversation_id: id, action: "attach" });
    expect(thread.banner).toBeNull();
    expect(thread.items.at(-1)?.content).toBe("slow slow slow slow");
    expect(thread.items.filter((i) => i.content === "Tell me slowly").length).toBe(1);
  });

  it("backs off 0.5, 1, 2, 4, 8 s ... then says the connection was lost (about 30 s)", async () => {
    expect(resumeDelays()).toEqual([500, 1000, 2000, 4000, 8000, 8000, 6500]);
    const { thread, sent } = await dropped();
    agent.refuse = 100; // the agent stays unreachable
    const before = agent.connects.length;
    const dropAt = Date.now();
    const seen: number[] = [];
    for (let i = 0; i < 40 && thread.streaming; i++) {
      if (thread.banner?.kind === "reattaching") seen.push(thread.banner.attempt);
      await flush(1000);
    }
    await sent;
    const at = agent.connects.slice(before);
    expect(at.length).toBe(7);
    expect(at[0] - dropAt).toBeGreaterThanOrEqual(498); // the first attach after 0.5 s
    expect(at[0] - dropAt).toBeLessThanOrEqual(500);
    expect(at.slice(1).map((t, i) => t - at[i])).toEqual([1000, 2000, 4000, 8000, 8000, 6500]);
    expect(seen).toContain(7);
    expect(thread.banner).toMatchObject({ kind: "disconnected" });
    expect(thread.streaming).toBe(false);
    expect(thread.items.at(-1)?.content).toBe("slow slow"); // the partial answer stays
  });

  it("reloads the stored answer when the run ended meanwhile (NO_ACTIVE_RUN), no error shown", async () => {
    const { thread, sent } = await dropped();
    agent.onSubmit = (job) => {
      const j = job as FakeJob;
      j.data({ role: "assistant", content: "", metadata: { type: "notice", code: "NO_ACTIVE_RUN", message: "" } });
      j.complete();
    };
    const stored = [
      question,
      userRow(3, "Tell me slowly"),
      answerRow(4, "slow slow slow slow slow."),
    ];
    history.mockResolvedValue(stored);
    await flush(500);
    await sent;
    expect(thread.banner).toBeNull();
    expect(thread.items.map((i) => i.content)).toEqual(["Tell me", "Tell me slowly", "slow slow slow slow slow."]);
    expect(thread.live).toEqual([]);
  });

  it("keeps a message that never reached the agent, to be sent again", async () => {
    const { thread, sent } = await dropped();
    agent.onSubmit = (job) => {
      const j = job as FakeJob;
      j.data({ role: "assistant", content: "", metadata: { type: "notice", code: "NO_ACTIVE_RUN", message: "" } });
      j.complete();
    };
    await flush(500); // the history still ends at the earlier question
    await sent;
    expect(thread.banner).toMatchObject({ kind: "disconnected", asked: 2 });
    expect(thread.items.map((i) => i.content)).toContain("Tell me slowly");
  });

  it("Stop while waiting to re-attach stops the run and frees the composer", async () => {
    const { thread, sent } = await dropped();
    agent.onSubmit = (job) => (job as FakeJob).complete();
    await thread.stop();
    await sent;
    expect(jobsOf("stop")[0].payload).toMatchObject({ conversation_id: id, action: "stop" });
    expect(jobsOf("attach")).toEqual([]);
    expect(thread.streaming).toBe(false);
    expect(thread.stopped).toBe(true);
    expect(thread.banner).toBeNull();
  });
});

describe("RUN_INTERRUPTED", () => {
  const interrupted = {
    role: "assistant",
    content: "",
    metadata: { type: "error", code: "RUN_INTERRUPTED", message: "the run's process died" },
  };

  it("keeps the partial text, shows the error and frees the composer", async () => {
    isActive.mockResolvedValue(true);
    const thread = new Thread(id);
    await thread.load();
    await until(() => jobsOf("attach").length === 1, "the attach");
    const attach = jobsOf("attach")[0];
    attach.data(text("Half of the"));
    await until(() => thread.live.length === 1, "the turn so far");
    attach.data(interrupted); // the value carries the error only
    attach.complete();
    await until(() => !thread.streaming, "the end");
    expect(thread.items.map((i) => i.metadata.type ?? i.content)).toEqual(["Tell me", "Half of the", "error"]);
    expect(thread.items.at(-1)?.metadata).toMatchObject({ code: "RUN_INTERRUPTED" });
    expect(thread.banner).toBeNull();
    expect(thread.pending).toBeNull();
  });

  it("is shown the same when the stream fails with it", async () => {
    isActive.mockResolvedValue(true);
    const thread = new Thread(id);
    await thread.load();
    await until(() => jobsOf("attach").length === 1, "the attach");
    const attach = jobsOf("attach")[0];
    attach.data(text("Half of the"));
    attach.push({ type: "status", stage: "error", message: "RUN_INTERRUPTED: the run's process died" });
    await until(() => !thread.streaming, "the end");
    expect(thread.items.at(-2)?.content).toBe("Half of the");
    expect(thread.items.at(-1)?.metadata).toMatchObject({ type: "error", code: "RUN_INTERRUPTED" });
    expect(thread.banner).toBeNull();
    expect(thread.streaming).toBe(false); // the composer takes a new message
  });
});
