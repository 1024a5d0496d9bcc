/**
 * Group commit for rows written on hot paths (opaque access tokens, used assertions): the rows asked
 * for in one turn of the event loop, and those that arrive while earlier ones are being written, go
 * out together in one multi-row INSERT that commits once, and each caller gets its own row's result
 * (e.g. whether it was new). Each caller's promise settles only after the statement holding its row
 * has committed, so nothing is answered before it is durable.
 *
 * A statement goes out in the check phase of the turn (setImmediate), not at the first row: requests
 * read in one turn reach their insert one after another, and a statement sent at the first one
 * carried that row alone while the rest waited for a free connection (under a JWT profile load half
 * the used-assertion statements held one row). A lone request waits for one phase of the loop, no
 * timer; a free statement slot is filled in the same way once the statement before it commits.
 *
 * A batch that fails is retried row by row, so one bad row cannot fail the requests it shared a
 * statement with; an outage fails each row on its own merits.
 */
interface Waiting<Row, Result> {
  row: Row;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

export interface InsertBatcherOptions {
  /** Statements in flight at once: while one waits for its commit, the next batch can go out. */
  concurrency: number;
  /** Rows per statement at most (PostgreSQL allows 65535 bind parameters per statement). */
  maxRows: number;
}

/** `write` stores the rows in one statement and returns one result per row, in order. */
export class InsertBatcher<Row, Result = void> {
  readonly #write: (rows: Row[]) => Promise<Result[]>;
  readonly #options: InsertBatcherOptions;
  #queue: Waiting<Row, Result>[] = [];
  #inFlight = 0;
  #scheduled = false;

  constructor(write: (rows: Row[]) => Promise<Result[]>, options: InsertBatcherOptions) {
    this.#write = write;
    this.#options = options;
  }

  /** Resolves once the row is committed; rejects with the database's error when it could not be. */
  add(row: Row): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.#queue.push({ row, resolve, reject });
      this.#schedule();
    });
  }

  /**
   * Drains in this turn's check phase, once, however many rows arrive before it. With every slot
   * taken there is nothing to drain into: the commit that frees one schedules the drain.
   */
  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= this.#options.concurrency) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#drain();
    });
  }

  #drain(): void {
    while (this.#queue.length > 0 && this.#inFlight < this.#options.concurrency) {
      const batch = this.#queue.splice(0, this.#options.maxRows);
      this.#inFlight += 1;
      void this.#flush(batch).finally(() => {
        this.#inFlight -= 1;
        if (this.#queue.length > 0) this.#schedule();
      });
    }
  }

  async #flush(batch: Waiting<Row, Result>[]): Promise<void> {
    try {
      const results = await this.#write(batch.map((waiting) => waiting.row));
      batch.forEach((waiting, i) => waiting.resolve(results[i]!));
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
      await Promise.all(
        batch.map((waiting) =>
          this.#write([waiting.row]).then(
            (results) => waiting.resolve(results[0]!),
            (rowError: unknown) => waiting.reject(rowError),
          ),
        ),
      );
    }
  }
}
