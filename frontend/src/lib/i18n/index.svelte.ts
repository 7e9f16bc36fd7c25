// The current language (persisted) and the lookup every component uses.

import { en, type MessageKey } from "./en";
import { ru } from "./ru";

export type Locale = "en" | "ru";
export const LOCALES: Locale[] = ["en", "ru"];
export type { MessageKey };

const dictionaries: Record<Locale, Record<MessageKey, string>> = { en, ru };
const KEY = "agent-chat.locale";

function initial(): Locale {
  if (typeof localStorage === "undefined") return "en";
  const saved = localStorage.getItem(KEY);
  if (saved === "en" || saved === "ru") return saved;
  return typeof navigator !== "undefined" && navigator.language.startsWith("ru") ? "ru" : "en";
}

export const i18n = $state<{ locale: Locale }>({ locale: initial() });

export function setLocale(locale: Locale): void {
  i18n.locale = locale;
  localStorage.setItem(KEY, locale);
  document.documentElement.lang = locale;
}

/** The string for `key` in the current language, with {name} placeholders filled. */
export function t(key: MessageKey, params: Record<string, string | number> = {}): string {
  const template = dictionaries[i18n.locale][key] ?? en[key];
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in params ? String(params[name]) : whole,
  );
}

/** "3 messages" / "3 сообщения", with the language's plural rules. */
export function countMessages(count: number): string {
  const form = new Intl.PluralRules(i18n.locale).select(count);
  const key = `chat.messages.${form}` as MessageKey;
  return t(key in en ? key : "chat.messages.other", { count });
}

export function formatDate(iso: string): string {
  return new Intl.DateTimeFormat(i18n.locale, { dateStyle: "medium", timeStyle: "short" }).format(
    new Date(iso),
  );
}

export function formatNumber(value: number): string {
  return new Intl.NumberFormat(i18n.locale).format(value);
}

/** A UTC day (YYYY-MM-DD) as a short date in the person's language. */
export function formatDay(day: string): string {
  return new Intl.DateTimeFormat(i18n.locale, { day: "numeric", month: "short", timeZone: "UTC" }).format(
    new Date(`${day}T00:00:00Z`),
  );
}
