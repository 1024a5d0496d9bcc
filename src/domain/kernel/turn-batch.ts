/**
 * Public-key operations grouped by turn of the event loop. An RS256 signature is 0.36 ms of AVX-512
 * big-number arithmetic; run between two requests' JavaScript, each evicts the other's working set,
 * and a token request's own work (parsing, client authentication, claims, the response) cost 2.4
 * times what it costs without the signature (perf record of a client_credentials JWT load on one
 * core: 146 µs beside 386 µs of RSA, against 61 µs with the signature knocked out). So the
 * operations that requests ask for while the event loop reads its ready sockets wait for the check
 * phase (setImmediate) and run there in a row, and the requests then go on in a row: each kind of
 * work runs warm, and the responses go out together. Tokens sign this way (domain/tokens.ts), and
 * the JWT assertions of clients and machine users are verified this way (oauth/assertions.ts, an
 * ES256 check is 80 µs). A lone request waits for one phase of the loop, microseconds; an operation
 * that throws fails its own request only.
 */
type Job = () => void;

export class TurnBatch {
  #queue: Job[] = [];

  /** `operation`'s result, computed in this turn's check phase together with the others asked for in this turn. */
  run<T>(operation: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push(() => {
        try {
          resolve(operation());
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
      if (this.#queue.length === 1) setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    const jobs = this.#queue;
    this.#queue = [];
    for (const job of jobs) job();
  }
}
