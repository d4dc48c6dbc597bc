/** Previous/next for a list page of the API's envelope. */
export function Pager({
  page,
  totalPages,
  onPage,
}: {
  page: number;
  /** The envelope's total_pages: null or absent when the page size is 0. */
  totalPages: number | null | undefined;
  onPage: (page: number) => void;
}) {
  const last = Math.max((totalPages ?? 1) - 1, 0);
  return (
    <nav class="pager" aria-label="Pages of the list">
      <button type="button" disabled={page <= 0} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page + 1} of {last + 1}
      </span>
      <button type="button" disabled={page >= last} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}
