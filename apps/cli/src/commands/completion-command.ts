import { Argument, Command } from "commander";
import { completeWords, FILES } from "../completion/complete-words.js";
import { completionScript, SHELLS, type Shell } from "../completion/shell-scripts.js";

/** `completion SHELL`: prints the completion script of bash, zsh or fish. */
export function completionCommand(): Command {
  return new Command("completion")
    .description("print shell completion (bash, zsh, fish): source <(hermes-sessions completion bash)")
    .addArgument(new Argument("<shell>", "bash, zsh or fish").choices(SHELLS))
    .option("--json", "print the script as a JSON string")
    .action((shell: Shell, o: { json?: boolean }) => {
      const script = completionScript(shell);
      process.stdout.write(o.json ? `${JSON.stringify({ shell, script })}\n` : script);
    });
}

/**
 * `__complete -- WORDS…` (hidden): what the completion scripts call. Prints one completion a
 * line, `value<TAB>description`, for the last word, or `:files` for a file name.
 */
export function completeCommand(program: Command): Command {
  return new Command("__complete")
    .description("completions for the words typed so far (used by the completion scripts)")
    .argument("[words...]", "the words after the program name, the last one being typed")
    .option("--json", "print the completions as JSON")
    .allowUnknownOption()
    .action((words: string[], o: { json?: boolean }) => {
      const found = completeWords(program, words.length === 0 ? [""] : words);
      if (o.json) {
        process.stdout.write(`${JSON.stringify(found === FILES ? { files: true } : found)}\n`);
        return;
      }
      if (found === FILES) {
        process.stdout.write(`${FILES}\n`);
        return;
      }
      for (const c of found) {
        const description = c.description?.replace(/[\t\n]+/g, " ");
        process.stdout.write(description ? `${c.value}\t${description}\n` : `${c.value}\n`);
      }
    });
}
