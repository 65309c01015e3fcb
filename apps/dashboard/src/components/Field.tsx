import {
  useId,
  type InputHTMLAttributes,
  type ReactNode,
  type TextareaHTMLAttributes,
} from 'react';

interface FieldProps {
  label: string;
  /** The API's message for this field, shown under it. */
  error?: string;
  hint?: string;
}

/** A label, the control it names, a hint and the API's error, linked for screen readers. */
function FieldFrame({
  label,
  error,
  hint,
  control,
}: FieldProps & { control: (a11y: Record<string, string | boolean | undefined>) => ReactNode }) {
  const id = useId();
  const describedBy = [error && `${id}-e`, hint && `${id}-h`].filter(Boolean).join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {control({
        id,
        'aria-invalid': error ? true : undefined,
        'aria-describedby': describedBy || undefined,
      })}
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

/** A framed control: the label, hint and error around what `control` draws with the props given. */
function framed<Props>(control: (props: Props) => ReactNode) {
  return function Framed({ label, error, hint, ...input }: FieldProps & Props) {
    return (
      <FieldFrame
        label={label}
        error={error}
        hint={hint}
        control={(a11y) => control({ ...a11y, ...input } as Props)}
      />
    );
  };
}

export const Field = framed((props: InputHTMLAttributes<HTMLInputElement>) => <input {...props} />);

export const TextArea = framed((props: TextareaHTMLAttributes<HTMLTextAreaElement>) => (
  <textarea {...props} />
));
