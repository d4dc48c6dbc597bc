// A page's h1. It names the page in the browser's tab and history, and takes the keyboard focus
// when the page opens: a link of the header only changes the hash, so without it a screen reader
// stays on the link and says nothing of the page it led to, and the next Tab starts from there.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

export function PageTitle({ title, children }: { title: string; children?: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Agentline console`;
  }, [title]);
  useEffect(() => heading.current?.focus(), []);
  return (
    <h1 ref={heading} tabIndex={-1}>
      {children ?? title}
    </h1>
  );
}
