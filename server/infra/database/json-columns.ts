import type {
  ColumnUpdateNode,
  KyselyPlugin,
  OperationNode,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';

/**
 * A value written to a `jsonb` column goes as its JSON text. `pg` sends a plain
 * object as JSON already, but an array as a PostgreSQL array literal and a
 * string as itself, which a `jsonb` column refuses or misreads. `pg` sends an
 * object with `toPostgres()` as what that returns (its documented hook).
 */
export class JsonValue {
  readonly value: unknown;
  constructor(value: unknown) {
    this.value = value;
  }
  toPostgres(): string {
    return JSON.stringify(this.value);
  }
}

/** `value` as it must be sent to a jsonb column: null stays SQL NULL. */
export const jsonValue = (value: unknown): JsonValue | null => (value === null || value === undefined ? null : value instanceof JsonValue ? value : new JsonValue(value));

/** The jsonb columns of each table (from the entities: server/domain/db.ts). */
export type JsonColumns = ReadonlyMap<string, ReadonlySet<string>>;

type Node = OperationNode & Record<string, unknown>;

/**
 * Wraps the values that INSERT and UPDATE statements built with Kysely write to
 * a jsonb column in `JsonValue` (Kysely's documented plugin hook; only the
 * statement's own insert list, SET list and ON CONFLICT SET list are looked at,
 * not the whole tree). Values in raw SQL are the caller's to send as JSON text.
 */
export class JsonColumnsPlugin implements KyselyPlugin {
  readonly #columns: JsonColumns;
  constructor(columns: JsonColumns) {
    this.#columns = columns;
  }

  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    if (node.kind === 'InsertQueryNode') {
      const json = this.#columns.get(tableName(node.into));
      if (!json || !node.columns) return node;
      const at = node.columns.map((c) => json.has(c.column.name));
      if (!at.some(Boolean)) return node;
      const values = node.values as Node | undefined;
      const onConflict = node.onConflict?.updates ? { ...node.onConflict, updates: this.#updates(json, node.onConflict.updates) } : node.onConflict;
      if (values?.kind !== 'ValuesNode') return { ...node, onConflict } as RootOperationNode;
      const rows = (values.values as Node[]).map((row) => {
        if (row.kind === 'PrimitiveValueListNode') return { ...row, values: (row.values as unknown[]).map((v, i) => (at[i] ? jsonValue(v) : v)) };
        if (row.kind === 'ValueListNode') return { ...row, values: (row.values as Node[]).map((v, i) => (at[i] ? wrapped(v) : v)) };
        return row;
      });
      return { ...node, values: { ...values, values: rows }, onConflict } as RootOperationNode;
    }
    if (node.kind === 'UpdateQueryNode' && node.updates) {
      const json = this.#columns.get(tableName(node.table));
      if (!json) return node;
      return { ...node, updates: this.#updates(json, node.updates) } as RootOperationNode;
    }
    return node;
  }

  #updates(json: ReadonlySet<string>, updates: ReadonlyArray<ColumnUpdateNode>): ColumnUpdateNode[] {
    return updates.map((u) => {
      const column = (u.column as Node).kind === 'ColumnNode' ? ((u.column as unknown as { column: { name: string } }).column.name) : null;
      return column !== null && json.has(column) ? ({ ...u, value: wrapped(u.value as Node) } as ColumnUpdateNode) : u;
    });
  }

  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result;
  }
}

function wrapped(node: Node): Node {
  return node.kind === 'ValueNode' ? { ...node, value: jsonValue(node.value) } : node;
}

function tableName(node: OperationNode | undefined): string {
  let n = node as Node | undefined;
  if (n?.kind === 'AliasNode') n = n.node as Node;
  if (n?.kind === 'TableNode') return ((n.table as Node).identifier as { name: string }).name;
  return '';
}
