import { CopyButton } from './CopyButton';

/** A webhook's signing secret, shown this once (creation or rotation) with a copy button. */
export function SecretOnce({ secret, rotated }: { secret: string; rotated?: boolean }) {
  return (
    <div className="notice" role="status">
      <p>
        The signing secret, shown only now: copy it to the receiver. It is never shown again.
        {rotated &&
          ' Deliveries carry a signature with the previous secret too for a while (24 h by' +
            ' default), so the receiver can switch without missing any.'}
      </p>
      <code className="secret" aria-label="Signing secret">
        {secret}
      </code>
      <CopyButton text={secret} label="Copy secret" />
    </div>
  );
}
