import { ApiError } from '@agentline/sdk';

/** The sentence the API sent (`detail`), or each input problem of a 422; else the error's text. */
export function errorSentences(error: unknown): string[] {
  if (error instanceof ApiError) {
    const detail = (error.body as { detail?: unknown } | null)?.detail;
    if (typeof detail === 'string') return [detail];
    if (Array.isArray(detail)) {
      return detail.map((problem: { loc?: unknown[]; msg?: string }) =>
        [(problem.loc ?? []).slice(1).join('.'), problem.msg].filter(Boolean).join(': '),
      );
    }
  }
  return [error instanceof Error ? error.message : String(error)];
}

/** An error as the API said it, announced to screen readers as it appears. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  const sentences = errorSentences(error);
  return (
    <div class="error" role="alert">
      {sentences.map((sentence) => (
        <p key={sentence}>{sentence}</p>
      ))}
    </div>
  );
}
