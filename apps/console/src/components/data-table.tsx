// Every table of the console: in a box that scrolls sideways on a narrow screen (the page itself
// never does), named by a caption that screen readers announce, with one header row.
import type { ComponentChildren } from 'preact';

export function DataTable({
  caption,
  columns,
  testId,
  children,
}: {
  caption: string;
  /** The header cells, in order: text, or markup where a column needs it. */
  columns: readonly ComponentChildren[];
  testId?: string;
  /** The body's rows. */
  children: ComponentChildren;
}) {
  return (
    <div class="table-scroll">
      <table data-testid={testId}>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column, index) => (
              <th scope="col" key={index}>
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
