import { openReadOnlyDatabase } from "@hermes/store";
import type { Command, Option } from "commander";
import { locateDatabase } from "../open-database.js";
import { isChoiceList } from "../parse-options.js";
import { knownSessions } from "../resolve-session.js";

/** One completion: the word, and what it is (shown by zsh and fish). */
export interface Completion {
  value: string;
  description?: string;
}

/** What `__complete` prints first when the shell should complete a file name instead. */
export const FILES = ":files";

/** Commands whose first argument is a session (id, prefix or title). */
const SESSION_COMMANDS = new Set(["show", "export", "fork", "title", "delete", "follow"]);
/** Options whose value is a file. */
const FILE_OPTIONS = new Set(["--db", "--out", "--from", "--to"]);
/** Options whose value is a list of the database's sources (comma-separated). */
const SOURCE_OPTIONS = new Set(["--source", "--exclude-source"]);
/** Options whose value is a session title. */
const TITLE_OPTIONS = new Set(["--title"]);
/** Most completions offered for sessions. */
const MAX_SESSIONS = 200;

/**
 * A word as the shell passes it, without its quoting: bash and zsh hand over what was typed
 * (`Fix\ Docker`, `'Fix Docker`), so a title is matched on its text.
 */
export function unquoteWord(word: string): string {
  const open = word[0] === "'" || word[0] === '"' ? word[0] : null;
  const body = open === null ? word : word.slice(1, word.endsWith(open) && word.length > 1 ? -1 : undefined);
  return open === "'" ? body : body.replace(/\\(.)/g, "$1");
}

/** The sources of the database's sessions (read-only, without a trace); none when unreadable. */
function knownSources(path: string): string[] {
  try {
    const file = openReadOnlyDatabase(path);
    try {
      const rows = file.db.prepare("SELECT DISTINCT source FROM sessions ORDER BY source").all() as Array<{
        source: string | null;
      }>;
      return rows.map((r) => r.source).filter((v): v is string => v !== null && v !== "");
    } finally {
      file.close();
    }
  } catch {
    return [];
  }
}

/**
 * Values of a comma-separated list option (`--role user,to` → `user,tool`): the part after the
 * last comma is completed, the items before it kept and not offered again.
 */
function listValues(values: readonly string[], current: string): Completion[] {
  const cut = current.lastIndexOf(",") + 1;
  const head = current.slice(0, cut);
  const given = new Set(head.split(",").filter(Boolean));
  return values
    .filter((v) => !given.has(v) && v.startsWith(current.slice(cut)))
    .map((v) => ({ value: head + v }));
}

/** Sessions whose id or title starts with `current`: ids (titles as descriptions), then titles. */
function sessionValues(path: string, current: string, ids: boolean): Completion[] {
  const known = knownSessions(path);
  const byId = ids
    ? known
        .filter((s) => s.id.startsWith(current))
        .map((s) => ({ value: s.id, ...(s.title ? { description: s.title } : {}) }))
    : [];
  const needle = current.toLowerCase();
  const byTitle = known
    .filter((s) => s.title?.toLowerCase().startsWith(needle) === true)
    .map((s) => ({ value: s.title!, description: s.id }));
  return [...byId, ...byTitle].slice(0, MAX_SESSIONS);
}

function optionFor(commands: readonly Command[], word: string): Option | undefined {
  for (const c of commands) {
    const found = c.options.find((o) => o.long === word || o.short === word);
    if (found !== undefined) return found;
  }
  return undefined;
}

const takesValue = (o: Option) => o.required || o.optional;

/**
 * Completions for the word being typed, given the words before it (without the program name):
 * commands, then a command's flags (and the global ones), the choices of a flag's value,
 * session ids (newest first, titles as descriptions) where a session is expected, shells for
 * `completion`. `[FILES]` where a file name goes.
 */
export function completeWords(program: Command, typed: readonly string[]): Completion[] | typeof FILES {
  const words = typed.map(unquoteWord);
  const current = words.at(-1) ?? "";
  const before = words.slice(0, -1);
  let command: Command | undefined;
  let db: string | undefined;
  const positionals: string[] = [];
  for (let i = 0; i < before.length; i++) {
    const w = before[i]!;
    if (w.startsWith("-")) {
      const option = optionFor(command === undefined ? [program] : [command, program], w);
      if (option !== undefined && takesValue(option)) {
        if (option.long === "--db") db = before[i + 1];
        i++;
      }
      continue;
    }
    if (command === undefined) {
      command = program.commands.find((c) => c.name() === w || c.aliases().includes(w));
      if (command === undefined) return [];
    } else {
      // A command's own subcommands (`backup list`, `backup verify`) before any argument.
      const sub = positionals.length === 0 ? command.commands.find((c) => c.name() === w) : undefined;
      if (sub !== undefined) command = sub;
      else positionals.push(w);
    }
  }
  const scopes = command === undefined ? [program] : [command, program];
  const previous = before.at(-1);
  const valueOption = previous === undefined ? undefined : optionFor(scopes, previous);
  const path = () => locateDatabase({ ...(db !== undefined ? { db } : {}) }).path;
  if (valueOption !== undefined && takesValue(valueOption)) {
    const long = valueOption.long ?? "";
    if (FILE_OPTIONS.has(long)) return FILES;
    if (SOURCE_OPTIONS.has(long)) return listValues(knownSources(path()), current);
    if (TITLE_OPTIONS.has(long)) return sessionValues(path(), current, false);
    const choices = valueOption.argChoices ?? [];
    // A repeatable list (`--role user,tool`) completes item by item; one choice (`--format`) whole.
    if (isChoiceList(valueOption)) return listValues(choices, current);
    return choices.filter((c) => c.startsWith(current)).map((value) => ({ value }));
  }
  if (current.startsWith("-")) {
    return scopes
      .flatMap((c) => c.options)
      .filter((o) => !o.hidden && o.long !== undefined && o.long.startsWith(current))
      .map((o) => ({ value: o.long!, description: o.description }));
  }
  if (command === undefined) {
    return program.commands
      .filter((c) => !(c as Command & { _hidden?: boolean })._hidden && c.name().startsWith(current))
      .map((c) => ({ value: c.name(), description: c.description() }));
  }
  if (command.commands.length > 0 && positionals.length === 0) {
    return command.commands
      .filter((c) => c.name().startsWith(current))
      .map((c) => ({ value: c.name(), description: c.description() }));
  }
  const argument = command.registeredArguments[positionals.length];
  if (argument?.argChoices !== undefined) {
    return argument.argChoices.filter((c) => c.startsWith(current)).map((value) => ({ value }));
  }
  if (["import", "restore", "verify"].includes(command.name()) && positionals.length === 0) return FILES;
  if (SESSION_COMMANDS.has(command.name()) && positionals.length === 0) {
    return sessionValues(path(), current, true);
  }
  return [];
}
