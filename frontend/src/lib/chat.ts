// The browser's only door to the agent: @gradio/client is imported here and nowhere else.
// One AgentChannel per conversation, one job in flight per channel (FR-002, FR-014, FR-015).
// A run is its conversation's, not its connection's (CONTRACT.md, "Runs outlive the page"):
// `attach` follows the live run again, `stop` ends it from any tab; neither counts as the job.

import { Client, handle_file } from "@gradio/client";
import { i18n } from "./i18n/index.svelte";
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
  /** With `confirm`: the arguments the person edited on the card. */
  args?: Record<string, unknown>;
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

/** How long Stop waits for the agent to take `stop` before it cancels the job instead. */
export const STOP_TIMEOUT_MS = 3000;

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
   * retry 5 x 5 s (or `attempts` times, for a caller with its own retry loop). */
  connect(attempts?: number): Promise<Client> {
    this.#connecting ??= this.#open(attempts).then(
      (client) => (this.#client = client),
      (error: unknown) => {
        this.#connecting = null;
        throw error;
      },
    );
    return this.#connecting;
  }

  async #open(attempts?: number): Promise<Client> {
    const url = new URL(AGENT_PATH, window.location.origin).href;
    const open = async () => {
      try {
        return await Client.connect(url, {
          // The page's language: the agent writes the confirmation card's line in it.
          headers: { Authorization: `Bearer ${this.token()}`, "Accept-Language": i18n.locale },
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
    const retry = attempts === undefined ? this.retry : { ...this.retry, attempts };
    return withRetries(open, { ...retry, isFatal, onRetry });
  }

  /** Submit one turn and report each streamed list of this turn's messages. */
  async run(input: TurnInput, onUpdate: (items: ChatItem[]) => void): Promise<TurnEnd> {
    if (this.#job) throw new Error("a job is already in flight on this conversation");
    const client = await this.connect();
    return this.#follow(
      client.submit("/chat", {
        message: { text: input.text, files: input.files.map((f) => handle_file(f)) },
        conversation_id: this.conversationId,
        action: input.action,
        focus: input.focus,
        options: encodeOptions(input.options),
      }),
      onUpdate,
    );
  }

  /** Follow the conversation's live run (`action: "attach"`): the first value is the turn so
   * far, then it streams as if watched from the start. `connectAttempts` bounds the connect. */
  async attach(onUpdate: (items: ChatItem[]) => void, connectAttempts?: number): Promise<TurnEnd> {
    if (this.#job) throw new Error("a job is already in flight on this conversation");
    const client = await this.connect(connectAttempts);
    if (this.#job) throw new Error("a job is already in flight on this conversation");
    return this.#follow(client.submit("/chat", this.#control("attach")), onUpdate);
  }

  /** Stop the conversation's run wherever it runs (`action: "stop"`, a short job of its own:
   * Gradio's cancel would end every job of this client). True when the agent took the stop;
   * false when the request could not be made or was refused (the caller falls back to cancel). */
  async stop(timeoutMs = STOP_TIMEOUT_MS): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const request = (async () => {
      try {
        const client = await this.connect(1);
        let refused = false;
        for await (const event of client.submit("/chat", this.#control("stop"))) {
          if (event.type === "data") {
            refused ||= normaliseTurn(event.data[0]).some((i) => i.metadata.type === "error");
          } else if (event.type === "status" && event.stage === "error") {
            return false;
          } else if (event.type === "status" && event.stage === "complete") {
            break;
          }
        }
        return !refused;
      } catch {
        return false;
      }
    })();
    try {
      return await Promise.race([request, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  #control(action: "attach" | "stop") {
    const message = { text: "", files: [] };
    return { message, conversation_id: this.conversationId, action, focus: "", options: "" };
  }

  async #follow(job: Job, onUpdate: (items: ChatItem[]) => void): Promise<TurnEnd> {
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

  /** End the job in flight here and cancel it through Gradio (Stop's fallback when `stop`
   * could not be sent); what has streamed so far stays on screen. */
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
