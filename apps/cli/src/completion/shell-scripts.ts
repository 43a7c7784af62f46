/** Shells `hermes-sessions completion` writes a script for. */
export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

// Each script asks `hermes-sessions __complete -- <words so far>` for one completion a line
// (`value<TAB>description`), already matched to the word being typed, or `:files` where a file
// name goes; the program knows its commands, flags, choices, sessions (ids and titles) and the
// database's sources, so the scripts stay this small.
const BASH = `# hermes-sessions completion for bash: add to ~/.bashrc
#   source <(hermes-sessions completion bash)
_hermes_sessions() {
  local cur=\${COMP_WORDS[COMP_CWORD]} out line IFS=$'\\n'
  out=$(hermes-sessions __complete -- "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
  if [[ $out == ":files"* ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  else
    # Already matched to the word typed; quoted, so a title goes in as one word.
    COMPREPLY=()
    for line in $out; do COMPREPLY+=("$(printf '%q' "\${line%%$'\\t'*}")"); done
  fi
}
complete -o default -F _hermes_sessions hermes-sessions
`;

const ZSH = `#compdef hermes-sessions
# hermes-sessions completion for zsh: add to ~/.zshrc (after compinit)
#   source <(hermes-sessions completion zsh)
_hermes_sessions() {
  local out
  local -a items
  out=$(hermes-sessions __complete -- "\${(@)words[2,CURRENT]}" 2>/dev/null)
  if [[ $out == :files* ]]; then
    _files
    return
  fi
  items=("\${(@f)$(print -r -- "$out" | sed -e 's/:/\\\\:/g' -e 's/\\t/:/')}")
  _describe 'hermes-sessions' items
}
compdef _hermes_sessions hermes-sessions
`;

const FISH = `# hermes-sessions completion for fish: save as
#   ~/.config/fish/completions/hermes-sessions.fish
function __hermes_sessions_complete
  set -l words (commandline -opc) (commandline -ct)
  set -l out (hermes-sessions __complete -- $words[2..-1] 2>/dev/null)
  if test "$out[1]" = ":files"
    __fish_complete_path (commandline -ct)
  else
    printf '%s\\n' $out
  end
end
complete -c hermes-sessions -f -a '(__hermes_sessions_complete)'
`;

/** The completion script for `shell`. */
export function completionScript(shell: Shell): string {
  return { bash: BASH, zsh: ZSH, fish: FISH }[shell];
}
