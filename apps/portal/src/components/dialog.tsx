import { useCallback, useEffect, useId, useRef, useState, type ReactNode } from 'react';

export interface ConfirmRequest {
  title: string;
  body: ReactNode;
  /** The confirm button's label, e.g. "Revoke token". */
  confirm: string;
  /** For deletes: the user types this (the thing's name) before the button works. */
  typeToConfirm?: string;
}

interface Open extends ConfirmRequest {
  resolve: (ok: boolean) => void;
}

/**
 * A styled, modal confirmation (a native `<dialog>`: focus is trapped inside, Escape cancels,
 * and focus goes back to what opened it). `confirm(request)` resolves true when confirmed.
 */
export function useConfirm(): [(request: ConfirmRequest) => Promise<boolean>, ReactNode] {
  const [open, setOpen] = useState<Open | null>(null);
  // What had focus when the dialog opened: it gets it back (the dialog leaves the DOM on close,
  // so the browser's own restoring does not happen).
  const opener = useRef<HTMLElement | null>(null);
  const confirm = useCallback((request: ConfirmRequest) => {
    opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    return new Promise<boolean>((resolve) => setOpen({ ...request, resolve }));
  }, []);
  const close = (ok: boolean) => {
    open?.resolve(ok);
    setOpen(null);
  };
  // Once the dialog has closed (outside a modal dialog nothing can take focus while it is open).
  useEffect(() => {
    if (open || !opener.current) return;
    opener.current.focus();
    opener.current = null;
  }, [open]);
  return [confirm, open ? <ConfirmDialog key={open.title} request={open} onClose={close} /> : null];
}

function ConfirmDialog({
  request,
  onClose,
}: {
  request: ConfirmRequest;
  onClose: (ok: boolean) => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  const [typed, setTyped] = useState('');
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  const matches = request.typeToConfirm === undefined || typed === request.typeToConfirm;
  return (
    <dialog
      ref={ref}
      className="confirm"
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-body`}
      onCancel={(e) => {
        e.preventDefault();
        onClose(false);
      }}
    >
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (matches) onClose(true);
        }}
      >
        <h2 id={`${id}-title`}>{request.title}</h2>
        <div id={`${id}-body`}>{request.body}</div>
        {request.typeToConfirm !== undefined ? (
          <div className="field">
            <label htmlFor={`${id}-typed`}>
              Type <strong className="typed-name">{request.typeToConfirm}</strong> to confirm
            </label>
            <input
              id={`${id}-typed`}
              autoComplete="off"
              spellCheck={false}
              value={typed}
              onChange={(e) => setTyped(e.target.value)}
            />
          </div>
        ) : null}
        <div className="actions">
          <button type="button" onClick={() => onClose(false)} autoFocus>
            Cancel
          </button>
          <button type="submit" className="danger" disabled={!matches}>
            {request.confirm}
          </button>
        </div>
      </form>
    </dialog>
  );
}

/**
 * A modal panel (a native `<dialog>`, as `useConfirm`'s): a titled box with a Close button, for
 * details or a form over the page. Escape and Close call `onClose`; focus goes back to what had
 * it when the panel opened. `className` places and sizes it (a side panel, say).
 */
export function Panel({
  title,
  onClose,
  className,
  children,
}: {
  title: ReactNode;
  onClose: () => void;
  className?: string;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  useEffect(() => {
    const dialog = ref.current;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (dialog && !dialog.open) dialog.showModal();
    return () => {
      dialog?.close();
      opener?.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      className={className}
      aria-labelledby={`${id}-title`}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <div className="panel-head">
        <h2 id={`${id}-title`}>{title}</h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      {children}
    </dialog>
  );
}

/** A row's detail in a centred `Panel` (the confirm box's size and look). */
export function InfoDialog({
  title,
  className,
  onClose,
  children,
}: {
  title: string;
  className?: string;
  onClose: () => void;
  children: ReactNode;
}) {
  return (
    <Panel title={title} className={`confirm${className ? ` ${className}` : ''}`} onClose={onClose}>
      {children}
    </Panel>
  );
}

/**
 * A modal dialog holding a form or a view (a native `<dialog>`: focus stays inside, Escape and
 * "Close" call `onClose`). Mount it to open it, unmount it to close it; the caller puts focus
 * back where it belongs (the button that opened it, or what the dialog produced).
 */
export function Modal({
  title,
  onClose,
  children,
}: {
  title: string;
  onClose: () => void;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      className="modal"
      aria-labelledby={`${id}-title`}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <div className="modal-head">
        <h2 id={`${id}-title`}>{title}</h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      {children}
    </dialog>
  );
}
