import { useState } from "preact/hooks";
import { api } from "../api.js";
import { countOf } from "../format.js";
import { ChoiceSelect } from "./choice-select.js";
import { ConfirmDialog } from "./confirm-dialog.js";
import { ErrorNote } from "./error-note.js";

/** "Prune…": deletes ended sessions older than N days (of one source), after a confirmation. */
export function PruneDialog({ sources, onPruned }: { sources: string[]; onPruned: () => void }) {
  const [open, setOpen] = useState(false);
  const [days, setDays] = useState(90);
  const [source, setSource] = useState("");
  const [result, setResult] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Prune…
      </button>
      {result ? (
        <span class="dim" role="status">
          {result}
        </span>
      ) : null}
      <ConfirmDialog
        open={open}
        title="Delete old sessions"
        confirmLabel="Delete them"
        onCancel={() => setOpen(false)}
        onConfirm={async () => {
          try {
            const { removed } = await api.prune(days, source || undefined);
            setResult(`${countOf(removed, "session")} deleted.`);
            setOpen(false);
            onPruned();
          } catch (e) {
            setError(e);
          }
        }}
      >
        <p>Ended sessions started more than this many days ago are deleted with their messages.</p>
        <label>
          Older than (days)
          <input type="number" min={1} value={days} onInput={(e) => setDays(Number(e.currentTarget.value))} />
        </label>
        <ChoiceSelect
          label="Source"
          anyLabel="Every source"
          value={source}
          choices={sources}
          onChange={setSource}
        />
        <ErrorNote error={error} />
      </ConfirmDialog>
    </>
  );
}
