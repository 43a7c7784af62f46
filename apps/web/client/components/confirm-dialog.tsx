import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

/**
 * A modal `<dialog>` that asks before a write: focus moves into it, Escape cancels, and the
 * action runs only on the confirm button.
 */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  confirmLabel: string;
  children?: ComponentChildren;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) dialog.showModal();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog ref={ref} aria-labelledby="confirm-title" onCancel={props.onCancel} onClose={props.onCancel}>
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          props.onConfirm();
        }}
      >
        <h2 id="confirm-title">{props.title}</h2>
        {props.children}
        <div class="dialog-buttons">
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
          <button type="submit" class="danger">
            {props.confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
