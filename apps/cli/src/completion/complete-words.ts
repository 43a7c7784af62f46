import type { Command, Option } from "commander";
import { locateDatabase } from "../open-database.js";
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
export function completeWords(program: Command, words: readonly string[]): Completion[] | typeof FILES {
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
  if (valueOption !== undefined && takesValue(valueOption)) {
    if (FILE_OPTIONS.has(valueOption.long ?? "")) return FILES;
    return (valueOption.argChoices ?? []).filter((c) => c.startsWith(current)).map((value) => ({ value }));
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
    const path = locateDatabase({ ...(db !== undefined ? { db } : {}) }).path;
    return knownSessions(path)
      .filter((s) => s.id.startsWith(current))
      .slice(0, 200)
      .map((s) => ({ value: s.id, ...(s.title ? { description: s.title } : {}) }));
  }
  return [];
}
