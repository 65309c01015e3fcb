import { useLayoutEffect, useRef } from 'react';

/**
 * A log that stays at its bottom as lines arrive, unless the person has scrolled up to read;
 * scrolling back to the bottom follows again. Focusable, so the keyboard can scroll it.
 */
export function LogView({ lines, label }: { lines: string[]; label: string }) {
  const box = useRef<HTMLPreElement>(null);
  const following = useRef(true);
  useLayoutEffect(() => {
    const element = box.current;
    if (element && following.current) element.scrollTop = element.scrollHeight;
  }, [lines]);
  const onScroll = () => {
    const element = box.current;
    if (!element) return;
    following.current = element.scrollHeight - element.scrollTop - element.clientHeight < 8;
  };
  return (
    <pre
      ref={box}
      className="log"
      role="log"
      aria-label={label}
      tabIndex={0}
      onScroll={onScroll}
      data-lines={lines.length}
    >
      {lines.join('\n')}
    </pre>
  );
}
