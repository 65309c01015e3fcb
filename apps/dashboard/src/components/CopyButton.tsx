import { useState } from 'react';

/** Copies `text` to the clipboard and says so. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <>
      <button type="button" onClick={copy}>
        {label}
      </button>
      <span role="status" className="hint">
        {copied === 'yes'
          ? 'Copied.'
          : copied === 'failed'
            ? 'Copy failed: select and copy it.'
            : ''}
      </span>
    </>
  );
}
