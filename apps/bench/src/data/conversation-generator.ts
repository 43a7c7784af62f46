import { type SeededRandom, ZipfPicker } from "./seeded-random.js";
import {
  CJK_LATIN,
  CJK_WORDS,
  ENGLISH_PHRASES,
  ENGLISH_WORDS,
  HYPHENATED,
  RARE_TERM,
  RARE_TERM_RATE,
  TOOL_NAMES,
} from "./vocabulary.js";

/** One generated message, with the database's column names (`tool_calls` as JSON text). */
export interface GeneratedMessage {
  role: "user" | "assistant" | "tool";
  content: string | null;
  tool_call_id: string | null;
  tool_calls: string | null;
  /** The parsed tool calls, for APIs that take them as values. */
  tool_call_list: unknown[] | null;
  tool_name: string | null;
  token_count: number | null;
  finish_reason: string | null;
  reasoning: string | null;
}

/** Share of messages whose text is CJK. */
export const CJK_SHARE = 0.1;

const englishPicker = new ZipfPicker(ENGLISH_WORDS, 1);
const cjkPicker = new ZipfPicker(CJK_WORDS, 0.8);

function englishText(rng: SeededRandom, targetLength: number): string {
  const parts: string[] = [];
  let length = 0;
  let sentence = 0;
  while (length < targetLength) {
    const r = rng.next();
    let word: string;
    if (r < 0.02) word = rng.pick(ENGLISH_PHRASES);
    else if (r < 0.028) word = rng.pick(HYPHENATED);
    else word = englishPicker.pick(rng);
    if (sentence === 0 && word.length > 0) word = word[0]!.toUpperCase() + word.slice(1);
    sentence++;
    if (sentence > 6 && rng.chance(0.15)) {
      word += rng.chance(0.8) ? "." : "?";
      sentence = 0;
    }
    parts.push(word);
    length += word.length + 1;
  }
  if (rng.chance(RARE_TERM_RATE)) parts.splice(rng.int(0, parts.length), 0, RARE_TERM);
  return parts.join(" ");
}

function cjkText(rng: SeededRandom, targetChars: number): string {
  let text = "";
  while (text.length < targetChars) {
    const r = rng.next();
    if (r < 0.08) text += rng.pick(CJK_LATIN);
    else if (r < 0.1) text += ` ${rng.pick(CJK_LATIN)} `;
    else text += cjkPicker.pick(rng);
    if (rng.chance(0.06)) text += rng.chance(0.7) ? "，" : "。";
  }
  return text;
}

function hex(rng: SeededRandom, n: number): string {
  let s = "";
  for (let i = 0; i < n; i++) s += "0123456789abcdef"[rng.int(0, 15)];
  return s;
}

function toolArguments(rng: SeededRandom, tool: string): Record<string, unknown> {
  switch (tool) {
    case "terminal":
      return {
        command: `${englishPicker.pick(rng)} ${rng.pick(["docker ps", "pnpm test", "git status", "ls -la"])}`,
      };
    case "read_file":
    case "write_file":
      return { path: `src/${englishPicker.pick(rng)}/${rng.pick(HYPHENATED)}.ts` };
    default:
      return { query: englishText(rng, 30) };
  }
}

/**
 * Produces the messages of a conversation in a realistic order: a user turn, an assistant reply
 * that sometimes calls tools (followed by one result per call and another reply), and so on.
 * Sizes are log-normal per role; one message in ten is CJK text.
 */
export class ConversationGenerator {
  readonly #rng: SeededRandom;
  #next: "user" | "assistant" = "user";
  #pendingTools: Array<{ id: string; name: string }> = [];

  constructor(rng: SeededRandom) {
    this.#rng = rng;
  }

  /** Starts a new conversation (the next message is a user turn). */
  reset(): void {
    this.#next = "user";
    this.#pendingTools = [];
  }

  #text(median: number, cap: number): string {
    const rng = this.#rng;
    const length = Math.min(cap, Math.max(2, Math.round(rng.logNormal(median, 0.9))));
    return rng.chance(CJK_SHARE)
      ? cjkText(rng, Math.max(1, Math.round(length / 2)))
      : englishText(rng, length);
  }

  /** The next message of the conversation. */
  next(): GeneratedMessage {
    const rng = this.#rng;
    const pending = this.#pendingTools.shift();
    if (pending !== undefined) {
      return {
        role: "tool",
        content: this.#text(200, 6000),
        tool_call_id: pending.id,
        tool_calls: null,
        tool_call_list: null,
        tool_name: pending.name,
        token_count: null,
        finish_reason: null,
        reasoning: null,
      };
    }
    if (this.#next === "user") {
      this.#next = "assistant";
      return {
        role: "user",
        content: this.#text(50, 3000),
        tool_call_id: null,
        tool_calls: null,
        tool_call_list: null,
        tool_name: null,
        token_count: null,
        finish_reason: null,
        reasoning: null,
      };
    }
    const calls = rng.chance(0.35) ? rng.int(1, 3) : 0;
    let toolCallList: unknown[] | null = null;
    if (calls > 0) {
      toolCallList = [];
      for (let i = 0; i < calls; i++) {
        const name = rng.pick(TOOL_NAMES);
        const id = `call_${hex(rng, 24)}`;
        toolCallList.push({
          id,
          type: "function",
          function: { name, arguments: JSON.stringify(toolArguments(rng, name)) },
        });
        this.#pendingTools.push({ id, name });
      }
    } else {
      this.#next = "user";
    }
    const content = calls > 0 && rng.chance(0.5) ? null : this.#text(160, 6000);
    return {
      role: "assistant",
      content,
      tool_call_id: null,
      tool_calls: toolCallList === null ? null : JSON.stringify(toolCallList),
      tool_call_list: toolCallList,
      tool_name: null,
      token_count: rng.int(20, 2000),
      finish_reason: calls > 0 ? "tool_calls" : "stop",
      reasoning: rng.chance(0.2) ? englishText(rng, 120) : null,
    };
  }
}
