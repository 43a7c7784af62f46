import { CompiledQuery, type RawBuilder } from "kysely";

const SLOT = Symbol("hermes.statementSlot");

/** A stand-in for one input value while a template is built; it compiles to a parameter. */
interface Slot {
  readonly [SLOT]: string;
}

function isSlot(value: unknown): value is Slot {
  return typeof value === "object" && value !== null && SLOT in value;
}

/**
 * Stand-ins for a template's inputs, typed as the values they stand for so the statement's
 * builder takes them unchanged. An array's stand-in is a one-element array (a builder may test
 * its length; its length is part of the shape's key).
 */
export const slots = {
  value<T>(name: string): T {
    return { [SLOT]: name } as unknown as T;
  },
  array<T>(name: string): T[] {
    return Object.assign([undefined], { [SLOT]: name }) as unknown as T[];
  },
};

interface Template {
  readonly sql: string;
  /** The compiled parameters: slots where inputs go, other values as they are. */
  readonly parameters: readonly unknown[];
}

/**
 * Statements compiled once per shape: the first statement of a shape (its key) is built with
 * {@link slots} in place of its inputs and compiled through Kysely; every later one of that
 * shape is its SQL text with the inputs put where their slots compiled, with no build and no
 * compile. The text stays the same string, so a prepared statement keeps its name cheaply.
 * Holds at most `capacity` shapes (the oldest dropped first).
 */
export class StatementTemplates {
  readonly #templates = new Map<string, Template>();
  readonly #capacity: number;

  constructor(capacity = 64) {
    this.#capacity = capacity;
  }

  /**
   * The statement of shape `key` for `inputs`. `build` makes it from stand-ins (see
   * {@link slots}) and must give the same SQL for every call with the same key.
   */
  compiled<R>(
    db: Parameters<RawBuilder<R>["compile"]>[0],
    key: string,
    inputs: Readonly<Record<string, unknown>>,
    build: () => RawBuilder<R>,
  ): CompiledQuery<R> {
    let template = this.#templates.get(key);
    if (template === undefined) {
      const compiled = build().compile(db);
      template = { sql: compiled.sql, parameters: compiled.parameters };
      if (this.#templates.size >= this.#capacity) {
        const oldest = this.#templates.keys().next().value;
        if (oldest !== undefined) this.#templates.delete(oldest);
      }
      this.#templates.set(key, template);
    }
    const parameters = template.parameters.map((p) => {
      if (!isSlot(p)) return p;
      if (!(p[SLOT] in inputs)) throw new Error(`statement template ${key}: no input named ${p[SLOT]}`);
      return inputs[p[SLOT]];
    });
    return CompiledQuery.raw(template.sql, parameters) as CompiledQuery<R>;
  }
}
