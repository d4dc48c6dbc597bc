// A labelled input of the console's forms: the label names the input for screen readers and a
// click on it focuses the input, and the value stays in the page's state (a controlled input).
import type { JSX } from 'preact';

type InputAttributes = Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'id' | 'value' | 'onInput'>;

export function TextField({
  id,
  label,
  value,
  onValue,
  ...input
}: InputAttributes & {
  id: string;
  label: string;
  value: string;
  onValue: (value: string) => void;
}) {
  return (
    <>
      <label for={id}>{label}</label>
      <input
        id={id}
        value={value}
        onInput={(event) => onValue(event.currentTarget.value)}
        {...input}
      />
    </>
  );
}
