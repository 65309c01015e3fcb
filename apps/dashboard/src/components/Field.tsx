import { useId, type InputHTMLAttributes, type TextareaHTMLAttributes } from 'react';

interface FieldProps {
  label: string;
  /** The API's message for this field, shown under it. */
  error?: string;
  hint?: string;
}

function describedBy(errorId: string, hintId: string, error?: string, hint?: string) {
  return [error && errorId, hint && hintId].filter(Boolean).join(' ') || undefined;
}

export function Field({
  label,
  error,
  hint,
  ...input
}: FieldProps & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(`${id}-e`, `${id}-h`, error, hint)}
        {...input}
      />
      {hint && (
        <small id={`${id}-h`} className="hint">
          {hint}
        </small>
      )}
      {error && (
        <small id={`${id}-e`} className="field-error">
          {error}
        </small>
      )}
    </div>
  );
}

export function TextArea({
  label,
  error,
  hint,
  ...input
}: FieldProps & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(`${id}-e`, `${id}-h`, error, hint)}
        {...input}
      />
      {hint && (
        <small id={`${id}-h`} className="hint">
          {hint}
        </small>
      )}
      {error && (
        <small id={`${id}-e`} className="field-error">
          {error}
        </small>
      )}
    </div>
  );
}
