// A page's h1. It names the page in the browser's tab and history, and takes the keyboard focus
// when the page opens: a link of the header only changes the hash, so without it a screen reader
// stays on the link and says nothing of the page it led to, and the next Tab starts from there.
// Layout effects run in the same task that puts the page in the document, so no key pressed in
// between lands on the old link, and the tab's title never names the page before.
import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';

export function PageTitle({ title, children }: { title: string; children?: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => {
    document.title = `${title} · Agentline console`;
  }, [title]);
  useLayoutEffect(() => heading.current?.focus(), []);
  return (
    <h1 ref={heading} tabIndex={-1}>
      {children ?? title}
    </h1>
  );
}
