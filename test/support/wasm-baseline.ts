/**
 * Runs the embedded database's WebAssembly (PGlite, 9 MB) on V8's baseline compiler only, in every
 * jest process (setupFiles, and the global setup). By default V8 also recompiles hot functions with its
 * optimizing compiler on background threads: a test database lives seconds, so that work rarely pays
 * back, and it competes with the tests for the two cores. Measured: a PGlite start and 200 queries took
 * 0.35 s of CPU instead of 0.7 s, and a set of seven suites 47 s of CPU instead of 57 s. Compiled code
 * is still shared between the files a worker runs (V8's wasm native module cache).
 */
import v8 from 'node:v8';

v8.setFlagsFromString('--no-wasm-tier-up');
v8.setFlagsFromString('--no-wasm-dynamic-tiering');
