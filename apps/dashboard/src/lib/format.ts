const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** An ISO timestamp as the person's local date and time. */
export const formatTime = (iso: string | null | undefined) =>
  iso ? dateTime.format(new Date(iso)) : '—';

export const shortHash = (hash: string) => hash.slice(0, 7);
