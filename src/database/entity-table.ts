import { DataSource, EntityMetadata, EntityTarget } from 'typeorm';

type Row = Record<string, unknown>;

/** One column as a statement reads it: its name in SQL, its property in the model, and how its value converts. */
export interface ColumnMapping {
  column: string;
  property: string;
  convert: ((value: unknown) => unknown) | null;
}

/** Several columns read as one nested object of the model (the event's venue), null when `presentWhen` is null. */
export interface Nested {
  property: string;
  fields: Record<string, string>;
  presentWhen: string;
}

// pg returns bigint and numeric as strings: the models hold numbers, as they always did.
const NUMERIC = new Set(['int', 'int2', 'int4', 'int8', 'integer', 'smallint', 'bigint', 'numeric', 'decimal', 'real', 'float4', 'float8']);
const toNumber = (v: unknown): number => Number(v);
const toNumberOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/**
 * A table as hand-written SQL reads it (src/database/README.md, "Persistence"): the select list, the
 * column names and the row mapper all come from the entity's TypeORM metadata, computed once, so a
 * stored field is declared in one place (the entity) and no statement keeps its own list of columns.
 *
 * `T` is what a row becomes: the entity's shape by default, or the model a feature reads (the events).
 */
export class EntityTable<T, E = T> {
  /** The table's name in SQL. */
  readonly name: string;
  /** The qualified select list (`e.id, e.organizer_id, …`): every column of the entity, under the table's alias. */
  readonly select: string;
  readonly columns: readonly ColumnMapping[];
  /** A row selected with `select` (or RETURNING it) as the model. */
  readonly map: (row: object) => T;

  constructor(
    private readonly metadata: EntityMetadata,
    /** The alias every statement gives the table (`events e`). */
    readonly alias: string,
    nested?: Nested,
    /** Only these properties (a statement that reads part of a row, or must never read a secret): every column otherwise. */
    only?: readonly string[],
  ) {
    this.name = metadata.tableName;
    const all = metadata.columns
      .filter((c) => !only || only.includes(c.propertyName))
      .map((c): ColumnMapping => {
        const type = typeof c.type === 'string' ? c.type : c.type === Number ? 'numeric' : '';
        const convert = NUMERIC.has(type) ? (c.isNullable ? toNumberOrNull : toNumber) : null;
        return { column: c.databaseName, property: c.propertyName, convert };
      });
    this.select = all.map((c) => `${alias}.${c.column}`).join(', ');
    this.columns = all;
    this.map = compileMapper<T>(all, nested);
  }

  /** The table of an entity, its rows read as the entity's shape. */
  static of<E>(dataSource: DataSource, entity: EntityTarget<E>, alias: string): EntityTable<E> {
    return new EntityTable<E>(dataSource.getMetadata(entity), alias);
  }

  /** The same table read through some of its columns: its own select list and mapper. */
  pick<K extends keyof E & string>(...properties: K[]): EntityTable<Pick<E, K>, E> {
    return new EntityTable<Pick<E, K>, E>(this.metadata, this.alias, undefined, properties);
  }

  /** The column of a property (`tokenHash` → `token_hash`), for a statement's WHERE, SET or RETURNING. */
  column(property: keyof E & string): string {
    const found = this.metadata.columns.find((c) => c.propertyName === property);
    if (!found) throw new Error(`${this.name} has no column for ${property}`);
    return found.databaseName;
  }

  /** The columns of these properties, in this order, unqualified: an INSERT's column list, or a RETURNING's a later part of the statement reads. */
  list(...properties: (keyof E & string)[]): string {
    return properties.map((p) => this.column(p)).join(', ');
  }

  /**
   * An INSERT's columns and their values, paired by property (`{ id: '$1', tokenHash: '$2' }` gives
   * `id, token_hash` and `$1, $2`): `INSERT INTO … (${columns}) VALUES (${values})`, or `SELECT ${values}
   * FROM …`, whose values no longer have to be kept in the order of a column list.
   */
  values(values: { [P in keyof E & string]?: string }): { columns: string; values: string } {
    const pairs = Object.entries(values) as [keyof E & string, string][];
    return { columns: this.list(...pairs.map(([property]) => property)), values: pairs.map(([, value]) => value).join(', ') };
  }

  /**
   * The select list with each column named `alias.column` (`o.id AS "o.id"`): for a row that holds
   * columns of the same name from several tables. `mapAs` reads the model of it.
   */
  selectAs(alias: string = this.alias): string {
    return this.columns.map((c) => `${alias}.${c.column} AS "${alias}.${c.column}"`).join(', ');
  }

  /** The model of a row holding `selectAs(alias)`. */
  mapAs(row: Record<string, unknown>, alias: string = this.alias): T {
    return this.map(Object.fromEntries(this.columns.map((c) => [c.column, row[`${alias}.${c.column}`]])));
  }
}

/**
 * The row mapper of a table, compiled once at start-up into a function that returns one object literal
 * (`{ "id": row["id"], "startsAt": row["starts_at"], … }`), as graphql-jit compiles queries: every model
 * of a table gets the same shape, built without a loop. A loop of keyed stores cost about 1 µs a row and
 * left every read of a model field slower; a page of 50 events with its ticket types paid that ~100 times.
 * The names in the generated code come from the entities' decorators (never from input), each written
 * as a JSON string literal.
 */
function compileMapper<T>(all: readonly ColumnMapping[], nested?: Nested): (row: object) => T {
  const converters: ((value: unknown) => unknown)[] = [];
  const read = (c: ColumnMapping) => {
    const value = `row[${JSON.stringify(c.column)}]`;
    if (c.convert === null) return value;
    converters.push(c.convert);
    return `convert[${converters.length - 1}](${value})`;
  };
  const columnOf = (property: string) => {
    const found = all.find((c) => c.property === property);
    if (!found) throw new Error(`No column for ${property}`);
    return found.column;
  };
  const nestedColumns = new Set(nested ? Object.values(nested.fields).map(columnOf) : []);
  const fields = all.filter((c) => !nestedColumns.has(c.column)).map((c) => `${JSON.stringify(c.property)}: ${read(c)}`);
  if (nested) {
    const present = `row[${JSON.stringify(columnOf(nested.fields[nested.presentWhen]!))}]`;
    const inner = Object.entries(nested.fields).map(
      ([field, property]) => `${JSON.stringify(field)}: row[${JSON.stringify(columnOf(property))}] ?? null`,
    );
    fields.push(`${JSON.stringify(nested.property)}: ${present} == null ? null : { ${inner.join(', ')} }`);
  }
  const mapper = new Function('row', 'convert', `return { ${fields.join(', ')} };`) as (row: Row, convert: typeof converters) => T;
  return (row) => mapper(row as Row, converters);
}
