import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { libraryEntries } from '../../tsup.config.js';

/*
 * The `@example` blocks of src/ are code users copy, so they are compiled: every ```ts block
 * under an `@example` tag becomes a module of its own, importing the package by its public names
 * (`sluice`, `sluice/redis`, …, mapped to src/ by `paths`), and all of them type-check in one
 * program with the repository's compiler options. Every callable value a public entry exports
 * must carry one.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const src = join(root, 'src');
/** Where the snippets pretend to live: inside the package, so packages resolve and files are ESM. */
const snippetDir = join(root, 'node_modules', '.cache', 'sluice-examples');

/** `sluice` and `sluice/<name>` for each tsup entry, to its source file. */
const publicEntries: Record<string, string> = Object.fromEntries(
  Object.entries(libraryEntries).map(([name, path]) => [
    name === 'index' ? 'sluice' : `sluice/${name}`,
    join(root, path),
  ]),
);

interface Snippet {
  /** `src/…/file.ts name`, as reported on failure; errors give the line within the snippet. */
  where: string;
  /** The virtual file it is compiled as. */
  fileName: string;
  code: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The name a JSDoc-carrying node declares, for messages (a `const` statement: its first variable). */
function ownerName(node: ts.Node): string {
  const named = (ts.isVariableStatement(node) ? node.declarationList.declarations[0] : node) as { name?: ts.Node };
  return named?.name && ts.isIdentifier(named.name) ? named.name.text : ts.SyntaxKind[node.kind];
}

/** The fenced ```ts blocks of every `@example` tag in one source file. */
function snippetsOf(path: string): { where: string; code: string }[] {
  const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: { where: string; code: string }[] = [];
  const visit = (node: ts.Node): void => {
    for (const tag of ts.getJSDocTags(node)) {
      if (tag.tagName.text !== 'example' || tag.parent.parent !== node) continue;
      const blocks = [...exampleText(tag, file).matchAll(/```ts\n([\s\S]*?)```/g)];
      const name = `${relative(root, path).split(sep).join('/')} ${ownerName(node)}`;
      if (blocks.length === 0) found.push({ where: name, code: '' });
      for (const [, code] of blocks) found.push({ where: name, code: code as string });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/**
 * The raw text of an `@example` tag up to the next tag outside a code fence. Not TypeScript's
 * parse of it, which starts a new tag at every `@` after whitespace, decorators in code included.
 */
function exampleText(tag: ts.JSDocTag, file: ts.SourceFile): string {
  const lines = file.text.slice(tag.getStart(file), tag.parent.getEnd()).split('\n').slice(1);
  const kept: string[] = [];
  let fenced = false;
  for (const line of lines.map((raw) => raw.replace(/^\s*\*(?: |\/$|$)/, ''))) {
    if (!fenced && line.startsWith('@')) break;
    if (line.startsWith('```')) fenced = !fenced;
    kept.push(line);
  }
  return kept.join('\n');
}

/** A deliberate type error, compiled with the rest: a check that reports nothing proves nothing. */
const canary = `import { gcra } from 'sluice';\ngcra({ limit: '10', periodMs: 60_000 });\n`;

function compilerOptions(): ts.CompilerOptions {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const paths = Object.fromEntries(Object.entries(publicEntries).map(([name, path]) => [name, [path]]));
  // sluice/nestjs examples use Nest's decorators, which are TypeScript's experimental ones.
  return { ...options, noEmit: true, experimentalDecorators: true, paths };
}

/** Compiles every snippet (and the canary) in one program. */
function compileAll(snippets: Snippet[]) {
  const virtual = new Map(snippets.map((snippet) => [snippet.fileName, snippet.code]));
  const canaryFile = join(snippetDir, 'canary.ts');
  virtual.set(canaryFile, canary);
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (name) => virtual.has(name) || fileExists.call(host, name);
  host.readFile = (name) => virtual.get(name) ?? readFile.call(host, name);
  host.getSourceFile = (name, language, ...rest) => {
    const code = virtual.get(name);
    return code === undefined
      ? getSourceFile.call(host, name, language, ...rest)
      : ts.createSourceFile(name, code, language, true);
  };
  const program = ts.createProgram({
    rootNames: [...virtual.keys(), ...Object.values(publicEntries)],
    options,
    host,
  });
  const errorsOf = (fileName: string) =>
    ts.getPreEmitDiagnostics(program, program.getSourceFile(fileName)).map((diagnostic) => {
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
      if (!diagnostic.file || diagnostic.start === undefined) return message;
      const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
      const inFile = diagnostic.file.fileName === fileName ? '' : `${relative(root, diagnostic.file.fileName)} `;
      return `${inFile}line ${line + 1}: ${message}`;
    });
  return { program, errorsOf, canaryFile };
}

/** Callable values (functions, not classes or constants) each public entry exports, without an `@example`. */
function exportsWithoutExample(program: ts.Program) {
  const checker = program.getTypeChecker();
  const callable: string[] = [];
  const missing: string[] = [];
  for (const [entry, path] of Object.entries(publicEntries)) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(path) as ts.SourceFile);
    for (const exported of module ? checker.getExportsOfModule(module) : []) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if (!(symbol.flags & ts.SymbolFlags.Value) || symbol.flags & ts.SymbolFlags.Class) continue;
      const declaration = symbol.valueDeclaration ?? symbol.declarations?.[0];
      if (!declaration) continue;
      if (checker.getTypeOfSymbolAtLocation(symbol, declaration).getCallSignatures().length === 0) continue;
      callable.push(`${entry} ${exported.name}`);
      const tags = (symbol.declarations ?? []).flatMap((node) => ts.getJSDocTags(node));
      if (!tags.some((tag) => tag.tagName.text === 'example')) missing.push(`${entry} ${exported.name}`);
    }
  }
  return { callable, missing };
}

/** Module specifiers a snippet imports that a user could not: anything relative. */
function privateImports(file: ts.SourceFile): string[] {
  return file.statements
    .flatMap((statement) =>
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
      statement.moduleSpecifier &&
      ts.isStringLiteral(statement.moduleSpecifier)
        ? [statement.moduleSpecifier.text]
        : [],
    )
    .filter((specifier) => specifier.startsWith('.') || specifier.startsWith('/'));
}

const examples = sourceFiles(src).flatMap(snippetsOf);
const snippets: Snippet[] = examples
  .filter((example) => example.code !== '')
  .map((example, index) => ({
    where: example.where,
    fileName: join(snippetDir, `example-${index}.ts`),
    // A module of its own, so declarations in different snippets never collide.
    code: `${example.code}\nexport {};\n`,
  }));
const { program, errorsOf, canaryFile } = compileAll(snippets);

describe('@example blocks in src/', () => {
  it('every @example holds a ```ts block', () => {
    expect(examples.filter((example) => example.code === '').map((example) => example.where)).toEqual([]);
  });

  it('every @example imports the package by its public names only', () => {
    const offenders = snippets.flatMap((snippet) =>
      privateImports(program.getSourceFile(snippet.fileName) as ts.SourceFile).map(
        (specifier) => `${snippet.where}: ${specifier}`,
      ),
    );
    expect(offenders).toEqual([]);
  });

  it('every @example type-checks against the public entries', () => {
    const failures = snippets.flatMap((snippet) =>
      errorsOf(snippet.fileName).map((error) => `${snippet.where}: ${error}`),
    );
    expect(failures).toEqual([]);
  });

  it('the check reports a snippet that does not compile', () => {
    expect(errorsOf(canaryFile)).toEqual([expect.stringMatching(/^line 2: .*'string'.*'number'/)]);
  });

  it('every function a public entry exports has an @example', () => {
    const { callable, missing } = exportsWithoutExample(program);
    // The listing sees through re-exports and `const` plugins, or this check would pass vacuously.
    expect(callable).toEqual(
      expect.arrayContaining(['sluice gcra', 'sluice/redis createRedisLimiter', 'sluice/fastify rateLimit']),
    );
    expect(missing).toEqual([]);
  });
});
