import { Field, TextArea } from './Field';

/** A project's name and description, each with the API's error under it. */
export function ProjectFields({
  name,
  description,
  errors,
  onName,
  onDescription,
  rows = 2,
}: {
  name: string;
  description: string;
  errors: Record<string, string>;
  onName: (name: string) => void;
  onDescription: (description: string) => void;
  rows?: number;
}) {
  return (
    <>
      <Field
        label="Project name"
        required
        maxLength={100}
        value={name}
        error={errors.name}
        onChange={(e) => onName(e.target.value)}
      />
      <TextArea
        label="Description"
        maxLength={2000}
        rows={rows}
        value={description}
        error={errors.description}
        onChange={(e) => onDescription(e.target.value)}
      />
    </>
  );
}
