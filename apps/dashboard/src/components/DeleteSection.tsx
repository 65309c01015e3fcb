import { useId, useState, type ReactNode } from 'react';
import { ConfirmDelete } from './ConfirmDelete';
import { ErrorNotice } from './ErrorView';

/**
 * A danger-zone panel: its heading, the button that opens the confirmation, and the confirmation
 * (what goes with it in `children`) that runs `remove`, its error under the text.
 */
export function DeleteSection({
  heading,
  openLabel,
  title,
  confirmLabel,
  remove,
  children,
}: {
  heading: string;
  openLabel: string;
  title: string;
  confirmLabel: string;
  remove: { isPending: boolean; error: unknown; mutate: () => void };
  children: ReactNode;
}) {
  const titleId = useId();
  const [confirming, setConfirming] = useState(false);
  return (
    <section className="panel danger-zone" aria-labelledby={titleId}>
      <h2 id={titleId}>{heading}</h2>
      <button type="button" className="danger" onClick={() => setConfirming(true)}>
        {openLabel}
      </button>
      <ConfirmDelete
        open={confirming}
        title={title}
        confirmLabel={confirmLabel}
        busy={remove.isPending}
        onConfirm={() => remove.mutate()}
        onCancel={() => setConfirming(false)}
      >
        {children}
        <ErrorNotice error={remove.error} />
      </ConfirmDelete>
    </section>
  );
}
