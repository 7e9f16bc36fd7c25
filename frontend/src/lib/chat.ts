// The browser's only door to the agent: @gradio/client is imported here and nowhere else.
// One AgentChannel per conversation, one job in flight per channel (FR-002, FR-014, FR-015).

import { Client, handle_file } from "@gradio/client";
import type { Mode } from "./mode.svelte";
import { normaliseTurn, type ChatItem, type ConfirmAction } from "./protocol";
import { withRetries, type RetryOptions } from "./retry";

export const AGENT_PATH = "/api/agent/gradio/";

/** The agent's optional `options` input (CONTRACT.md, "Agent endpoint"). */
export interface TurnOptions {
  /** The id of the call on the confirmation card the person answered. */
  call_id?: string;
  mode?: Mode;
  workflow?: string;
  resources?: { files?: string[]; tables?: string[] };
}

export interface TurnInput {
  text: string;
  files: File[];
  action: "" | ConfirmAction;
  /** JSON of what the person is looking at (the agent's `focus` input), or "". */
  focus: string;
  options?: TurnOptions;
}

/** The `options` input as sent: "" when there is nothing to say. */
export function encodeOptions(options: TurnOptions | undefined): string {
  const set = Object.entries(options ?? {}).filter(([, value]) => value !== undefined);
  return set.length ? JSON.stringify(Object.fromEntries(set)) : "";
}

export type TurnEnd =
  | { kind: "done" }
  | { kind: "cancelled" }
  | { kind: "disconnected"; message: string }
  | { kind: "failed"; message: string };

/** The agent refused the user's token: the session is over. */
export class AgentUnauthorized extends Error {}

type Job = ReturnType<Client["submit"]>;

const BROKEN = /connection errored|failed to fetch|networkerror|network error|load failed/i;
const UNAUTHORIZED = /\b401\b|credentials|not authorized/i;

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  return JSON.stringify(error);
}

export class AgentChannel {
  #client: Client | null = null;
  #connecting: Promise<Client> | null = null;
  #job: Job | null = null;
  #stop: (() => void) | null = null;
  /** Told before each wait while the agent is unreachable. */
  onRetry: ((attempt: number, total: number) => void) | null = null;

  constructor(
    readonly conversationId: string,
    private readonly token: () => string,
    private readonly retry: Omit<RetryOptions, "isFatal"> = {},
  ) {}

  get busy(): boolean {
    return this.#job !== null;
  }

  /** Connect once (concurrent callers share the attempt); while the agent is unreachable,
   * retry 5 x 5 s. */
  connect(): Promise<Client> {
    this.#connecting ??= this.#open().then(
      (client) => (this.#client = client),
      (error: unknown) => {
        this.#connecting = null;
        throw error;
      },
    );
    return this.#connecting;
  }

  async #open(): Promise<Client> {
    const url = new URL(AGENT_PATH, window.location.origin).href;
    const open = async () => {
      try {
        return await Client.connect(url, {
          headers: { Authorization: `Bearer ${this.token()}` },
          events: ["data", "status"],
          record_history: false,
        });
      } catch (error) {
        if (UNAUTHORIZED.test(messageOf(error))) throw new AgentUnauthorized(messageOf(error));
        throw error;
      }
    };
    const isFatal = (e: unknown) => e instanceof AgentUnauthorized;
    const onRetry = (attempt: number, total: number) => this.onRetry?.(attempt, total);
    return withRetries(open, { ...this.retry, isFatal, onRetry });
  }

  /** Submit one turn and report each streamed list of this turn's messages. */
  async run(input: TurnInput, onUpdate: (items: ChatItem[]) => void): Promise<TurnEnd> {
    if (this.#job) throw new Error("a job is already in flight on this conversation");
    const client = await this.connect();
    const job = client.submit("/chat", {
      message: { text: input.text, files: input.files.map((f) => handle_file(f)) },
      conversation_id: this.conversationId,
      action: input.action,
      focus: input.focus,
      options: encodeOptions(input.options),
    });
    this.#job = job;
    const stopped = new Promise<TurnEnd>((resolve) => {
      this.#stop = () => resolve({ kind: "cancelled" });
    });
    // The browser knows first when the network is gone; a stalled stream may not tell.
    let onOffline = () => {};
    const offline = new Promise<TurnEnd>((resolve) => {
      onOffline = () => resolve({ kind: "disconnected", message: "offline" });
      window.addEventListener("offline", onOffline);
    });
    let open = true; // nothing reaches the page once the turn has ended
    const forward = (items: ChatItem[]) => open && onUpdate(items);
    try {
      return await Promise.race([this.#consume(job, forward), stopped, offline]);
    } finally {
      open = false;
      window.removeEventListener("offline", onOffline);
      this.#job = null;
      this.#stop = null;
    }
  }

  async #consume(job: Job, onUpdate: (items: ChatItem[]) => void): Promise<TurnEnd> {
    try {
      for await (const event of job) {
        if (event.type === "data") {
          onUpdate(normaliseTurn(event.data[0]));
        } else if (event.type === "status" && event.stage === "error") {
          const message = typeof event.message === "string" ? event.message : "";
          if (event.broken || BROKEN.test(message)) return { kind: "disconnected", message };
          return { kind: "failed", message };
        } else if (event.type === "status" && event.stage === "complete") {
          return { kind: "done" };
        }
      }
      return { kind: "done" };
    } catch (error) {
      const message = messageOf(error);
      return BROKEN.test(message) ? { kind: "disconnected", message } : { kind: "failed", message };
    }
  }

  /** Stop the job in flight (FR-014); what has streamed so far stays on screen. */
  async cancel(): Promise<void> {
    const job = this.#job;
    this.#stop?.();
    if (job) await job.cancel();
  }

  close(): void {
    void this.cancel();
    this.#client?.close();
    this.#client = null;
    this.#connecting = null;
  }
}

const channels = new Map<string, AgentChannel>();

/** The channel of a conversation (created on first use). */
export function channelFor(conversationId: string, token: () => string): AgentChannel {
  let channel = channels.get(conversationId);
  if (!channel) {
    channel = new AgentChannel(conversationId, token);
    channels.set(conversationId, channel);
  }
  return channel;
}

/** Close idle channels other than `keep` (each holds a heartbeat stream open). */
export function closeIdleChannels(keep: string | null): void {
  for (const [id, channel] of channels) {
    if (id !== keep && !channel.busy) {
      channel.close();
      channels.delete(id);
    }
  }
}

/** Stop every job of this browser session and drop the channels (log-out). */
export function closeAllChannels(): void {
  for (const channel of channels.values()) channel.close();
  channels.clear();
}
