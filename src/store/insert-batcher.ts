/**
 * Group commit for rows written on hot paths (opaque access tokens): rows that arrive while earlier
 * ones are being written go out together, in one multi-row INSERT that commits once. Each caller's
 * promise settles only after the statement holding its row has committed, so nothing is answered
 * before it is durable; a lone request is written at once (no timer, no added latency when idle).
 *
 * A batch that fails is retried row by row, so one bad row cannot fail the requests it shared a
 * statement with; an outage fails each row on its own merits.
 */
interface Waiting<Row> {
  row: Row;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export interface InsertBatcherOptions {
  /** Statements in flight at once: while one waits for its commit, the next batch can go out. */
  concurrency: number;
  /** Rows per statement at most (PostgreSQL allows 65535 bind parameters per statement). */
  maxRows: number;
}

export class InsertBatcher<Row> {
  readonly #write: (rows: Row[]) => Promise<void>;
  readonly #options: InsertBatcherOptions;
  #queue: Waiting<Row>[] = [];
  #inFlight = 0;

  constructor(write: (rows: Row[]) => Promise<void>, options: InsertBatcherOptions) {
    this.#write = write;
    this.#options = options;
  }

  /** Resolves once the row is committed; rejects with the database's error when it could not be. */
  add(row: Row): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ row, resolve, reject });
      this.#drain();
    });
  }

  #drain(): void {
    while (this.#queue.length > 0 && this.#inFlight < this.#options.concurrency) {
      const batch = this.#queue.splice(0, this.#options.maxRows);
      this.#inFlight += 1;
      void this.#flush(batch).finally(() => {
        this.#inFlight -= 1;
        this.#drain();
      });
    }
  }

  async #flush(batch: Waiting<Row>[]): Promise<void> {
    try {
      await this.#write(batch.map((waiting) => waiting.row));
      for (const waiting of batch) waiting.resolve();
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
      await Promise.all(
        batch.map((waiting) =>
          this.#write([waiting.row]).then(
            () => waiting.resolve(),
            (rowError: unknown) => waiting.reject(rowError),
          ),
        ),
      );
    }
  }
}
