/** The six comparisons of condition_variable and condition_datetime: `left <condition> right`. */
export type Condition = '==' | '!=' | '>' | '>=' | '<' | '<=';

export function compare<T extends string | number>(condition: Condition, left: T, right: T): boolean {
  switch (condition) {
    case '==':
      return left === right;
    case '!=':
      return left !== right;
    case '>':
      return left > right;
    case '>=':
      return left >= right;
    case '<':
      return left < right;
    case '<=':
      return left <= right;
  }
}

/** Where a failed condition goes: its false target, or on to the next action when it has none. */
export function falseTarget(id: string | undefined): { kind: 'jump'; target_id: string } | { kind: 'next' } {
  return id && id !== '00000000-0000-0000-0000-000000000000' ? { kind: 'jump', target_id: id } : { kind: 'next' };
}
