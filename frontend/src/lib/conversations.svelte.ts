// The conversation list and which conversation is open, shared by the drawer and the full page.

import * as rest from "./api/rest";
import { ApiError } from "./api/client";
import { closeAllChannels, closeIdleChannels } from "./chat";
import { Thread } from "./thread.svelte";

const KEY = "agent-chat.conversation";

function saved(): string | null {
  return typeof localStorage === "undefined" ? null : localStorage.getItem(KEY);
}

export const chat = $state<{
  list: rest.Conversation[];
  archived: boolean;
  selectedId: string | null;
  selected: rest.Conversation | null;
  error: string | null;
  /** The conversation whose archive the backend refused because a run still answers in it. */
  archiveRefused: string | null;
}>({
  list: [],
  archived: false,
  selectedId: saved(),
  selected: null,
  error: null,
  archiveRefused: null,
});

const threads = new Map<string, Thread>();

/** The open thread of a conversation (loaded on first use). */
export function threadOf(id: string): Thread {
  let thread = threads.get(id);
  if (!thread) {
    thread = new Thread(id, () => void refresh());
    threads.set(id, thread);
    void thread.load();
  }
  return thread;
}

export async function refresh(): Promise<void> {
  try {
    chat.list = await rest.listConversations(chat.archived);
    chat.error = null;
    if (chat.selectedId) {
      chat.selected =
        chat.list.find((c) => c.id === chat.selectedId) ??
        (await rest.getConversation(chat.selectedId));
    }
  } catch (error) {
    if (error instanceof ApiError && error.code === "NOT_FOUND") select(null);
    else chat.error = error instanceof Error ? error.message : String(error);
  }
}

export function select(id: string | null): void {
  chat.selectedId = id;
  chat.selected = chat.list.find((c) => c.id === id) ?? null;
  if (id) localStorage.setItem(KEY, id);
  else localStorage.removeItem(KEY);
  closeIdleChannels(id);
  if (id) void threads.get(id)?.rejoin(); // a run may have started here in another tab
  if (id && !chat.selected) void refresh();
}

export async function showArchived(archived: boolean): Promise<void> {
  chat.archived = archived;
  await refresh();
  if (found.query) await search(found.query);
}

/** A new, empty conversation, opened. */
let creating: Promise<rest.Conversation> | null = null;

/** A new conversation, selected. While one is being created, that one: a "New conversation"
 * click followed at once by Send (or a second click) gives one conversation, and the message
 * goes into the conversation the view ends on, never into one the view then leaves. */
export function create(): Promise<rest.Conversation> {
  creating ??= (async () => {
    try {
      const conversation = await rest.createConversation();
      chat.list = [conversation, ...chat.list.filter((c) => c.id !== conversation.id)];
      select(conversation.id);
      return conversation;
    } finally {
      creating = null;
    }
  })();
  return creating;
}

/** The conversation being created, if a creation is under way. */
export function beingCreated(): Promise<rest.Conversation> | null {
  return creating;
}

export async function archive(id: string): Promise<void> {
  try {
    await rest.archive(id);
  } catch (error) {
    // 409 CONVERSATION_BUSY: an answer is still streaming (here or in another tab); nothing
    // changed on the server, so say so and keep the conversation as it is.
    if (error instanceof ApiError && error.code === "CONVERSATION_BUSY") {
      chat.archiveRefused = id;
      return;
    }
    throw error;
  }
  chat.archiveRefused = null;
  await refresh();
  // Only the conversation that was archived: one archived from the list may not be the open one.
  if (chat.selected && chat.selectedId === id) chat.selected = { ...chat.selected, is_archived: true };
}

export async function restore(id: string): Promise<void> {
  const conversation = await rest.restore(id);
  if (chat.selectedId === id) chat.selected = conversation;
  await refresh();
}

export async function rename(id: string, title: string): Promise<void> {
  const conversation = await rest.renameConversation(id, title);
  chat.list = chat.list.map((c) => (c.id === id ? conversation : c));
  if (chat.selectedId === id) chat.selected = conversation;
}

/** Conversation search (title and message text, on the server), one page at a time. */
export const found = $state<{
  query: string;
  items: rest.ConversationHit[];
  total: number;
  loading: boolean;
  error: string | null;
}>({ query: "", items: [], total: 0, loading: false, error: null });

const SEARCH_PAGE = 20;
let searchSeq = 0;

/** Search for `query` from its first page ("" ends the search); only the newest answer counts. */
export async function search(query: string, more = false): Promise<void> {
  const q = query.trim();
  found.query = q;
  if (!q) {
    Object.assign(found, { items: [], total: 0, loading: false, error: null });
    return;
  }
  const seq = ++searchSeq;
  found.loading = true;
  try {
    const offset = more ? found.items.length : 0;
    const page = await rest.searchConversations(q, chat.archived, offset, SEARCH_PAGE);
    if (seq !== searchSeq) return;
    found.items = more ? [...found.items, ...page.items] : page.items;
    found.total = page.total;
    found.error = null;
  } catch (error) {
    if (seq === searchSeq) found.error = error instanceof Error ? error.message : String(error);
  } finally {
    if (seq === searchSeq) found.loading = false;
  }
}

/** Forget everything of the signed-out user. */
export function reset(): void {
  closeAllChannels();
  for (const thread of threads.values()) thread.dispose();
  threads.clear();
  chat.list = [];
  chat.selected = null;
  chat.selectedId = null;
  Object.assign(found, { query: "", items: [], total: 0, loading: false, error: null });
  localStorage.removeItem(KEY);
}
