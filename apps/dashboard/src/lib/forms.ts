import { useEffect, useState, type FormEvent } from 'react';
import { ApiError } from '../api/client';

/**
 * The API's complaint about each field (400's details, 409's conflict on `conflictField`), and
 * what is left for the form as a whole.
 */
export function fieldErrorsOf(
  error: unknown,
  conflictField?: string,
): { fields: Record<string, string>; rest: unknown } {
  if (!(error instanceof ApiError)) return { fields: {}, rest: error };
  if (error.status === 400 && error.body?.details?.length) {
    return { fields: error.fieldErrors(), rest: null };
  }
  if (error.status === 409 && conflictField) {
    return { fields: { [conflictField]: error.message }, rest: null };
  }
  return { fields: {}, rest: error };
}

/**
 * A form's two halves of a mutation: the API's errors per field and for the whole form (see
 * fieldErrorsOf), and the submit handler that sends `send()` instead of the browser's own submit.
 */
export function formOf(
  mutation: { error: unknown },
  send: () => void,
  conflictField?: string,
): { fields: Record<string, string>; rest: unknown; submit: (event: FormEvent) => void } {
  const submit = (event: FormEvent) => {
    event.preventDefault();
    send();
  };
  return { ...fieldErrorsOf(mutation.error, conflictField), submit };
}

/**
 * A form's text fields: their values, and `bind(key, errors)`, what a Field takes for one of them
 * (its value, the API's error for it, the handler that keeps what is typed); `reset()` sets them
 * back to `initial`.
 */
export function useTextFields<T extends Record<string, string>>(initial: T) {
  const [values, setValues] = useState(initial);
  const bind = (key: keyof T & string, errors: Record<string, string> = {}) => ({
    value: values[key],
    error: errors[key],
    onChange: (event: { target: { value: string } }) =>
      setValues((now) => ({ ...now, [key]: event.target.value })),
  });
  return { values, bind, reset: () => setValues(initial) };
}

/** The page's title, as a screen reader announces it on navigation. */
export function useTitle(title: string | undefined) {
  useEffect(() => {
    if (title) document.title = `${title} · Platform`;
  }, [title]);
}
