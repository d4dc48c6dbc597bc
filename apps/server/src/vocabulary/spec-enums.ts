// Runtime lists of a spec enum's values (for SQL CHECKs, zod schemas, wire order), held to the
// generated type: a list that misses a value the spec has, or has one it lacks, fails to compile.

type Missing<T, L extends readonly unknown[]> = Exclude<T, L[number]>;

/**
 * `everyValueOf<T>()(['a', 'b'])` returns the list as given (its order kept), and compiles only if
 * it holds every value of `T` and nothing else.
 */
export function everyValueOf<T extends string>() {
  return <const L extends readonly T[]>(
    values: L & ([Missing<T, L>] extends [never] ? unknown : { missingFromList: Missing<T, L> }),
  ): L => values;
}
