// Node 20's JSON.parse reports some mistakes without a position ("Unexpected token ']'", typical
// of a trailing comma or a comment), so after a failure a small scanner finds where it went wrong.

class ErrorAtOffset extends Error {
  constructor(readonly offset: number) {
    super(`not JSON at offset ${offset}`);
  }
}

const NUMBER_OR_LITERAL = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

/** Offset of the first character that keeps `text` from being JSON, or -1 if it is valid. */
function firstErrorOffset(text: string): number {
  let i = 0;
  const fail = (): never => {
    throw new ErrorAtOffset(i);
  };
  const skipWhitespace = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i += 1;
  };
  const expect = (char: string) => {
    if (text[i] !== char) fail();
    i += 1;
  };
  const string = () => {
    expect('"');
    while (i < text.length) {
      const char = text[i]!;
      if (char === '"') {
        i += 1;
        return;
      }
      if (char === '\\') {
        const escaped = text[i + 1] ?? '';
        if ('"\\/bfnrt'.includes(escaped) && escaped !== '') i += 2;
        else if (escaped === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
        else fail();
      } else if (char < ' ') {
        fail();
      } else {
        i += 1;
      }
    }
    fail();
  };
  const members = (close: string, member: () => void) => {
    i += 1;
    skipWhitespace();
    if (text[i] === close) {
      i += 1;
      return;
    }
    for (;;) {
      member();
      skipWhitespace();
      if (text[i] === ',') {
        i += 1;
        continue;
      }
      expect(close);
      return;
    }
  };
  const value = (): void => {
    skipWhitespace();
    const char = text[i];
    if (char === '{') {
      members('}', () => {
        skipWhitespace();
        string();
        skipWhitespace();
        expect(':');
        value();
      });
    } else if (char === '[') {
      members(']', value);
    } else if (char === '"') {
      string();
    } else {
      NUMBER_OR_LITERAL.lastIndex = i;
      if (!NUMBER_OR_LITERAL.test(text)) fail();
      i = NUMBER_OR_LITERAL.lastIndex;
    }
  };
  try {
    value();
    skipWhitespace();
    if (i < text.length) fail();
    return -1;
  } catch (error) {
    if (error instanceof ErrorAtOffset) return error.offset;
    throw error;
  }
}

export interface JsonSyntaxProblem {
  line: number;
  column: number;
  reason: string;
}

/** Where and why `text` (which JSON.parse rejected with `error`) is not JSON. */
export function locateJsonSyntaxError(text: string, error: unknown): JsonSyntaxProblem {
  const offset = Math.max(firstErrorOffset(text), 0);
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  const reason = (error instanceof Error ? error.message : String(error))
    .replace(/ in JSON at position \d+.*$/s, '')
    // V8 appends a copy of the text around the error; the line and column say more.
    .replace(/, (?:\.\.\.)?".*$/s, '');
  return { line, column, reason };
}
