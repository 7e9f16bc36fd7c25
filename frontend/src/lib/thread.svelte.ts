// One open conversation: its history, the turn streaming now, and what to tell the person.
// All agent traffic goes through chat.ts; all REST through api/rest.ts.

import { AgentUnauthorized, channelFor, type TurnInput, type TurnOptions } from "./chat";
import { ApiError } from "./api/client";
import * as rest from "./api/rest";
import { activeFocus } from "./focus.svelte";
import {
  collapseToolUpdates,
  expandRow,
  pendingConfirmation,
  type ChatItem,
  type ConfirmAction,
  type ConfirmMeta,
  type ResourceRef,
} from "./protocol";
import { RetriesExhausted } from "./retry";
import { signOut, token } from "./session.svelte";

export type Banner =
  | { kind: "error"; code: string; message: string }
  | { kind: "reconnecting"; attempt: number; total: number }
  | { kind: "unreachable"; retry: TurnInput }
  | { kind: "disconnected"; retry: TurnInput };

export class Thread {
  items = $state<ChatItem[]>([]);
  live = $state<ChatItem[]>([]);
  streaming = $state(false);
  stopped = $state(false);
  loading = $state(true);
  banner = $state<Banner | null>(null);
  decisions = $state<Record<string, ConfirmAction>>({});
  /** Milliseconds from submit to the first streamed text, for the last turn. */
  firstTokenMs = $state<number | null>(null);

  constructor(
    readonly id: string,
    /** Told when the conversation changed on the server (title, message count). */
    private readonly onChange: () => void = () => {},
  ) {}

  get pending(): ConfirmMeta | null {
    if (this.streaming) return null;
    const meta = pendingConfirmation(this.items);
    return meta && !this.decisions[meta.call_id] ? meta : null;
  }

  /** The last question asked here (files are not kept: they were sent once). */
  get lastQuestion(): string | null {
    for (let i = this.items.length - 1; i >= 0; i--) {
      const item = this.items[i];
      if (item.role === "user" && !item.metadata.type && item.content.trim()) return item.content;
    }
    return null;
  }

  /** Whether the last turn ended in an answer that can be asked for again. */
  get canRegenerate(): boolean {
    return !this.streaming && this.pending === null && this.lastQuestion !== null;
  }

  /** Ask the last question again, as a new turn of this conversation: the agent sees its
   * earlier answer in the history and answers afresh; nothing already said is removed. */
  async regenerate(): Promise<boolean> {
    const question = this.lastQuestion;
    return question && this.canRegenerate ? this.send(question, []) : false;
  }

  /** Settles when the history has been read (a message sent earlier would be lost under it). */
  ready: Promise<void> = Promise.resolve();

  load(): Promise<void> {
    this.ready = this.#load();
    return this.ready;
  }

  async #load(): Promise<void> {
    this.loading = true;
    try {
      const rows = await rest.history(this.id);
      this.items = collapseToolUpdates(rows.flatMap(expandRow));
      // Open the agent connection now so the first message does not wait for it.
      channelFor(this.id, token)
        .connect()
        .catch(() => {});
    } catch (error) {
      this.#fail(error);
    } finally {
      this.loading = false;
    }
  }

  /** Send a new message, with the files, what the person is looking at (FR-023) and the
   * options (mode, selected resources, workflow). */
  async send(text: string, files: File[], options?: TurnOptions): Promise<boolean> {
    const target = activeFocus();
    const focus = target ? JSON.stringify(target) : "";
    const resources: ResourceRef[] = [
      ...(options?.resources?.files ?? []).map((ref) => ({ kind: "file" as const, ref, status: "selected" as const })),
      ...(options?.resources?.tables ?? []).map((ref) => ({ kind: "table" as const, ref, status: "selected" as const })),
    ];
    const echo = { role: "user", content: text, metadata: {}, files: files.map((f) => f.name), resources };
    await this.ready;
    return this.#turn({ text, files, action: "", focus, options }, echo);
  }

  /** Answer the confirmation card of `callId` (FR-009); the id travels with the decision, so
   * an out-of-date card approves nothing. The card stays answerable if it was not sent. */
  async answer(action: ConfirmAction, callId: string): Promise<boolean> {
    const meta = this.pending;
    if (meta) this.decisions = { ...this.decisions, [meta.call_id]: action };
    const options = { call_id: callId };
    const sent = await this.#turn({ text: "", files: [], action, focus: "", options }, null);
    if (!sent && meta) {
      const { [meta.call_id]: _, ...rest } = this.decisions;
      this.decisions = rest;
    }
    return sent;
  }

  async retry(input: TurnInput): Promise<boolean> {
    return this.#turn(input, null);
  }

  async stop(): Promise<void> {
    if (!this.streaming) return;
    this.stopped = true;
    await channelFor(this.id, token).cancel();
  }

  async #turn(input: TurnInput, echo: ChatItem | null): Promise<boolean> {
    if (this.streaming) return false;
    this.banner = null;
    this.stopped = false;
    this.streaming = true;
    try {
      // Another tab may be answering in this conversation right now (FR-015).
      if (await this.#busyElsewhere()) {
        this.banner = { kind: "error", code: "CONVERSATION_BUSY", message: "" };
        return false;
      }
      if (echo) this.items = [...this.items, echo];
      await this.#stream(input);
      return true;
    } catch (error) {
      this.#fail(error, input);
      return false;
    } finally {
      this.items = collapseToolUpdates([...this.items, ...this.live]);
      this.live = [];
      this.streaming = false;
      this.onChange();
    }
  }

  async #stream(input: TurnInput): Promise<void> {
    const channel = channelFor(this.id, token);
    channel.onRetry = (attempt, total) => this.reconnecting(attempt, total);
    const started = performance.now();
    this.firstTokenMs = null;
    const end = await channel.run(input, (items) => {
      if (this.banner?.kind === "reconnecting") this.banner = null;
      if (this.firstTokenMs === null && items.some((i) => i.content && !i.metadata.type)) {
        this.firstTokenMs = Math.round(performance.now() - started);
        this.onChange(); // the first message has titled the conversation by now
      }
      this.live = collapseToolUpdates(items);
      const unauthorized = items.find(
        (i) => i.metadata.type === "error" && i.metadata.code === "UNAUTHORIZED",
      );
      if (unauthorized) signOut(true);
    });
    switch (end.kind) {
      case "cancelled":
        this.stopped = true;
        break;
      case "disconnected":
        channel.close(); // the retry gets a fresh connection
        this.banner = { kind: "disconnected", retry: input };
        break;
      case "failed":
        this.banner = { kind: "error", code: "", message: end.message };
        break;
    }
  }

  /** True while another tab's run holds the conversation; a lease we just let go of
   * (after Stop) is given a moment to clear. */
  async #busyElsewhere(): Promise<boolean> {
    for (let attempt = 0; attempt < 4; attempt++) {
      if (!(await rest.isActive(this.id))) return false;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    return true;
  }

  /** Shown while chat.ts waits to reconnect. */
  reconnecting(attempt: number, total: number): void {
    this.banner = { kind: "reconnecting", attempt, total };
  }

  #fail(error: unknown, input?: TurnInput): void {
    if (error instanceof AgentUnauthorized) {
      signOut(true);
    } else if (error instanceof RetriesExhausted && input) {
      this.banner = { kind: "unreachable", retry: input };
    } else if (error instanceof ApiError) {
      this.banner = { kind: "error", code: error.code, message: error.message };
    } else if (input) {
      this.banner = { kind: "disconnected", retry: input };
    } else {
      this.banner = { kind: "error", code: "", message: String(error) };
    }
  }
}
