/**
 * The `SET` list of an UPDATE built from the fields a caller chose to change: parameters are numbered
 * after the ones the statement already has (`$1` is usually the row's id).
 */
export class Assignments {
  private readonly sets: string[] = [];

  constructor(readonly params: unknown[]) {}

  set(column: string, value: unknown): this {
    this.params.push(value);
    this.sets.push(`${column} = $${this.params.length}`);
    return this;
  }

  toSql(): string {
    return this.sets.join(', ');
  }
}
