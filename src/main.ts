/**
 * The `gatehouse` command's entry (README.md#cli; the commands are in commands.ts). Node's on-disk
 * compile cache is switched on before anything else loads: every start type-strips and compiles some
 * three hundred modules, and with the cache a start after the first skips most of that (`gatehouse
 * help`: 2.0 s, then 1.1 s). It lives in the system's temporary folder (`NODE_COMPILE_CACHE` names
 * another); when it cannot be written, Node carries on without it.
 */
import module from 'node:module';

module.enableCompileCache();
await import('./commands.ts');
