import { CopyButton } from './CopyButton';

/** A webhook's signing secret, shown this once (creation or rotation) with a copy button. */
export function SecretOnce({ secret }: { secret: string }) {
  return (
    <div className="notice" role="status">
      <p>The signing secret, shown only now: copy it to the receiver. It is never shown again.</p>
      <code className="secret" aria-label="Signing secret">
        {secret}
      </code>
      <CopyButton text={secret} label="Copy secret" />
    </div>
  );
}
