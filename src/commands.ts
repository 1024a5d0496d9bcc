/**
 * The `gatehouse` CLI (README.md#cli): start, migrate, bootstrap FILE, keys rotate,
 * machine-key create --user NAME [--out FILE], pat create --user NAME [--expires RFC3339] [--out FILE],
 * features set NAME on|off.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import type { Logger } from 'pino';
import { ConfigError, displayedDatabaseUrl, loadConfig, unknownVariables, type Config } from './config/index.ts';
import type { MasterKey } from './domain/kernel/crypto.ts';
import type { Running } from './server/start.ts';
import { connectionProblem } from './store/connection-problem.ts';
import type { DB } from './store/database.ts';

// Each command loads what it uses when it runs (`import()` below): `help` or a usage error answers
// without loading the server, and `migrate` or `features set` without Express, Connect and the
// generated protobuf code.

const USAGE = `usage: gatehouse <command>

  start [--bootstrap FILE]                   serve (migrates first; first-run defaults on an empty database)
  migrate                                    run database migrations
  bootstrap FILE                             apply a bootstrap file (YAML or JSON), all or nothing
  keys rotate                                publish a new signing key now; it signs within seconds
  machine-key create --user NAME [--out FILE]  create a key for a machine user (ZITADEL key file JSON)
  pat create --user NAME [--expires RFC3339] [--out FILE]
                                             create a personal access token for a machine user (30 days unless --expires)
  features set NAME on|off                   switch an instance feature (oidcTokenExchange)

Configuration comes from the environment: see docs/configuration.md.`;

class UsageError extends Error {}

/** The version in package.json, for the start's first line. */
const VERSION = (JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Opens the database for one command (the embedded folder locked: store/data-dir-lock.ts) and closes it after `work`. */
async function onDatabase<T>(config: Config, work: (db: DB) => Promise<T>): Promise<T> {
  const { openDatabase } = await import('./store/database.ts');
  const { db } = await openDatabase(config, { oneShot: true }); // one command, then exit (store/database.ts)
  try {
    return await work(db);
  } finally {
    await db.destroy();
  }
}

/**
 * A command that seals nothing: a configured master key the database does not know is refused before
 * anything is written (server/master-key.ts), then the migrations, then `work`.
 */
async function withDatabase<T>(config: Config, work: (db: DB) => Promise<T>): Promise<T> {
  const [{ migrate }, { checkMasterKey }] = await Promise.all([import('./store/database.ts'), import('./server/master-key.ts')]);
  return onDatabase(config, async (db) => {
    await checkMasterKey(db, config);
    await migrate(db);
    return work(db);
  });
}

/** A command that seals data under the master key (`keys rotate`): the key checked, the migrations, the key bound, then `work`. */
async function withMasterKey<T>(config: Config, log: Logger, work: (db: DB, key: MasterKey) => Promise<T>): Promise<T> {
  const [{ migrate }, { openMasterKey }] = await Promise.all([import('./store/database.ts'), import('./server/master-key.ts')]);
  return onDatabase(config, async (db) => {
    const opened = await openMasterKey(db, config, log);
    await migrate(db);
    await opened.bind();
    return work(db, opened.key);
  });
}

async function requireInstance(db: DB): Promise<string> {
  const { findFirstInstanceId } = await import('./store/instances.ts');
  const id = await findFirstInstanceId(db);
  if (!id) throw new UsageError('the database has no instance yet: run `gatehouse start` or `gatehouse bootstrap FILE` first');
  return id;
}

async function start(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { bootstrap: { type: 'string' } }, strict: true });
  const bootstrapFile = values.bootstrap ?? config.bootstrapFile;
  // The logger first, and a line before the server's modules load: on a cold compile cache that
  // takes seconds (docs/operations.md#starting).
  const { createProcessLogger } = await import('./server/request-context.ts');
  const log = createProcessLogger(config);
  log.info({ version: VERSION, node: process.version }, `starting Gatehouse ${VERSION} on Node.js ${process.version}`);
  const [{ startServer }, { applyBootstrapFile }, { ensureFirstRun, printFirstRun }] = await Promise.all([
    import('./server/start.ts'),
    import('./bootstrap/apply.ts'),
    import('./bootstrap/first-run.ts'),
  ]);
  // The signal handlers come first: the server answers /healthz as soon as it listens, while its
  // background jobs are still starting, and a SIGTERM in that moment must stop it gracefully too
  // (Node's default would end the process at once, exit code none).
  let running: Running | undefined;
  let signalled: string | undefined;
  const stop = (server: Running, signal: string) => {
    log.info({ signal }, 'shutting down');
    server.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  const shutdown = (signal: string) => {
    if (signalled) {
      if (!running) process.exit(1); // a second signal while the start hangs (a database that does not answer): give up now
      return;
    }
    signalled = signal;
    if (running) stop(running, signal); // else as soon as the start is complete, below
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  running = await startServer({
    config,
    log,
    prepare: async (db, masterKey) => {
      if (bootstrapFile) {
        const options = { serviceName: config.serviceName, masterKey, idpAllowPrivateNetworks: config.idpAllowPrivateNetworks };
        const { created, updated, unchanged } = await applyBootstrapFile(db, bootstrapFile, options);
        log.info({ file: bootstrapFile, created, updated, unchanged }, `bootstrap: applied ${bootstrapFile} (${created} created, ${updated} updated, ${unchanged} unchanged)`);
        return;
      }
      const created = await ensureFirstRun(db, { externalUrl: config.externalUrl, serviceName: config.serviceName, patPath: config.firstPatPath });
      if (created) log.info({ firstRun: true }, 'first run: created a default organization, an admin user, a demo client and an API token');
      else log.info({ firstRun: false }, 'first run: not needed, the database holds an instance (no bootstrap file given)');
      if (created) process.stdout.write(`${printFirstRun(created, config.externalUrl)}\n`);
    },
  });
  if (signalled) stop(running, signalled);
}

async function run(argv: string[]): Promise<void> {
  const config = loadConfig();
  for (const { name, closest } of unknownVariables(process.env)) {
    process.stderr.write(`gatehouse: ${name} is not a variable Gatehouse reads${closest ? `; did you mean ${closest}?` : ''} (ignored)\n`);
  }
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
      return start(config, rest);
    case 'migrate':
      await withDatabase(config, async () => {});
      process.stdout.write('migrations are up to date\n');
      return;
    case 'bootstrap': {
      const [file, ...extra] = rest;
      if (!file || extra.length > 0) throw new UsageError('usage: gatehouse bootstrap FILE');
      const [{ applyBootstrap }, { readBootstrapFile }] = await Promise.all([import('./bootstrap/apply.ts'), import('./bootstrap/schema.ts')]);
      const bootstrap = await readBootstrapFile(file); // a file with mistakes is refused before the database is opened
      // Identity providers' secrets are sealed with the master key: a file with providers opens it.
      const { document } = bootstrap;
      const sealing = document.identityProviders.length > 0 || document.orgs.some((org) => org.identityProviders.length > 0);
      const log = sealing ? (await import('./server/request-context.ts')).createProcessLogger(config) : undefined;
      const summary = log
        ? await withMasterKey(config, log, (db, masterKey) =>
          applyBootstrap(db, bootstrap, { serviceName: config.serviceName, masterKey, idpAllowPrivateNetworks: config.idpAllowPrivateNetworks }))
        : await withDatabase(config, (db) => applyBootstrap(db, bootstrap, { serviceName: config.serviceName }));
      process.stdout.write(`${JSON.stringify(summary)}\n`);
      return;
    }
    case 'keys': {
      if (rest.join(' ') !== 'rotate') throw new UsageError('usage: gatehouse keys rotate');
      const [{ rotateNow }, { createProcessLogger }] = await Promise.all([import('./domain/tokens/keys.ts'), import('./server/request-context.ts')]);
      const kid = await withMasterKey(config, createProcessLogger(config), async (db, key) => {
        await requireInstance(db);
        return rotateNow(db, key, config.signingAlg);
      });
      process.stdout.write(`published signing key ${kid}; it signs once every server has seen it (within seconds)\n`);
      return;
    }
    case 'machine-key': {
      const { values, positionals } = parseArgs({
        args: rest,
        options: { user: { type: 'string' }, out: { type: 'string' } },
        allowPositionals: true,
        strict: true,
      });
      if (positionals.join(' ') !== 'create' || !values.user) throw new UsageError('usage: gatehouse machine-key create --user NAME [--out FILE]');
      const userName = values.user;
      const { createMachineKey } = await import('./cli/machine-key.ts');
      const keyFile = await withDatabase(config, async (db) => {
        await requireInstance(db);
        return createMachineKey(db, { userName });
      });
      const json = `${JSON.stringify(keyFile, null, 2)}\n`;
      if (values.out) {
        fs.writeFileSync(values.out, json, { mode: 0o600 });
        process.stdout.write(`wrote key ${keyFile.keyId} for ${userName} to ${values.out}\n`);
      } else {
        process.stdout.write(json);
      }
      return;
    }
    case 'pat': {
      const usage = 'usage: gatehouse pat create --user NAME [--expires RFC3339] [--out FILE]';
      const { values, positionals } = parseArgs({
        args: rest,
        options: { user: { type: 'string' }, expires: { type: 'string' }, out: { type: 'string' } },
        allowPositionals: true,
        strict: true,
      });
      if (positionals.join(' ') !== 'create' || !values.user) throw new UsageError(usage);
      const { createPersonalAccessToken, patExpiry, PatError } = await import('./cli/personal-access-token.ts');
      let expiresAt: Date;
      try {
        expiresAt = patExpiry(values.expires);
      } catch (error) {
        if (error instanceof PatError) throw new UsageError(`${error.message}\n${usage}`);
        throw error;
      }
      const userName = values.user;
      const created = await withDatabase(config, async (db) => {
        await requireInstance(db);
        return createPersonalAccessToken(db, { userName, expiresAt, serviceName: config.serviceName });
      });
      const expires = created.expiresAt.toISOString();
      if (values.out) {
        // The token followed by one newline, as ZITADEL writes its PAT files; readable by the owner only.
        fs.writeFileSync(values.out, `${created.token}\n`, { mode: 0o600 });
        fs.chmodSync(values.out, 0o600); // an existing file keeps its mode otherwise
        process.stdout.write(`wrote personal access token ${created.tokenId} for ${userName} (expires ${expires}) to ${values.out}\n`);
      } else {
        process.stdout.write(`${created.token}\n`);
        process.stderr.write(`personal access token ${created.tokenId} for ${userName}, expires ${expires}\n`);
      }
      return;
    }
    case 'features': {
      const [verb, name, state, ...extra] = rest;
      if (verb !== 'set' || !name || (state !== 'on' && state !== 'off') || extra.length > 0) {
        throw new UsageError('usage: gatehouse features set NAME on|off');
      }
      const { isFeatureName, setFeatures } = await import('./domain/instance/features.ts');
      if (!isFeatureName(name)) throw new UsageError(`unknown feature ${name}; known: oidcTokenExchange`);
      const details = await withDatabase(config, async (db) => setFeatures(db, await requireInstance(db), { [name]: state === 'on' }, 'cli'));
      process.stdout.write(`${name} is ${state} (sequence ${details.sequence})\n`);
      return;
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return;
    default:
      throw new UsageError(`unknown command ${command}\n\n${USAGE}`);
  }
}

run(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || error instanceof ConfigError || (error instanceof Error && error.name === 'BootstrapError')) {
    process.stderr.write(`gatehouse: ${error.message}\n`);
    process.exit(2);
  }
  const databaseUrl = process.env['DATABASE_URL'];
  const problem = databaseUrl ? connectionProblem(error) : undefined;
  if (databaseUrl && problem) {
    // one line an operator acts on, instead of the driver's words (docs/operations.md#database)
    process.stderr.write(`gatehouse: DATABASE_URL ${displayedDatabaseUrl(databaseUrl)}: ${problem}\n`);
    process.exit(2);
  }
  process.stderr.write(`gatehouse: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
