// Loading a program: the main file, its imports (stdlib modules and relative
// paths, each file once, cycles rejected), the top-level names of each file,
// and the order in which everything else is checked and elaborated.
#include "frontend/Sema.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#ifndef MODELC_STDLIB_DIR
#define MODELC_STDLIB_DIR "stdlib"
#endif

namespace modelc {

bool buildProgram(const std::string &path, const FrontendOptions &options,
                  SourceManager &sm, DiagnosticEngine &diag, Program &program) {
  sema::Sema sema(options, sm, diag, program);
  return sema.run(path);
}

} // namespace modelc

namespace modelc::sema {

namespace fs = std::filesystem;

Sema::Sema(const FrontendOptions &options, SourceManager &sm,
           DiagnosticEngine &diag, Program &program)
    : options(options), sm(sm), diag(diag), program(program),
      stdlibDir(options.stdlibDir.empty() ? MODELC_STDLIB_DIR
                                          : options.stdlibDir) {}

DepthGuard::DepthGuard(Sema &sema, SourceLoc loc) : sema(sema) {
  ok_ = ++sema.depth <= kMaxDepth && !sema.aborted;
  if (sema.depth > kMaxDepth && !sema.depthReported) {
    sema.depthReported = true;
    sema.diag.error(loc, "expressions, statements and block calls are nested "
                         "too deeply (more than " +
                             std::to_string(kMaxDepth) + " levels)");
  }
}

bool Sema::run(const std::string &path) {
  unsigned errorsBefore = diag.errorCount();
  program.mainFile = path;
  int main = openModule(path, "", nullptr);
  if (main < 0 || !modules[main]->ast) {
    program.sourceHash = computeSourceHash();
    return false;
  }
  checkDefines();
  const ast::Module &ast = *modules[main]->ast;
  for (const ast::DataDecl &d : ast.data)
    if (!modules[main]->duplicates.count(&d))
      dataSetIndex(main, d.name, d.loc);
  for (const ast::EntryDecl &e : ast.entries)
    if (!modules[main]->duplicates.count(&e))
      elaborateEntry(e);
  program.sourceHash = computeSourceHash();
  return diag.errorCount() == errorsBefore;
}

int Sema::findOrLoadFile(const std::string &path, std::string &error) {
  // Buffers added in memory (tests) stand for files of the same path.
  std::string normal = fs::path(path).lexically_normal().string();
  for (int i = 0; i < sm.numFiles(); ++i) {
    const std::string &p = sm.file(i).path;
    if (p == path || fs::path(p).lexically_normal().string() == normal)
      return i;
  }
  return sm.loadFile(path, error);
}

std::string Sema::resolveImport(const ModuleInfo &importer,
                                const std::string &spec) const {
  fs::path p(spec);
  if (p.extension() != ".mdl")
    return (fs::path(stdlibDir) / (spec + ".mdl")).lexically_normal().string();
  if (p.is_absolute())
    return p.lexically_normal().string();
  return (fs::path(importer.path).parent_path() / p)
      .lexically_normal()
      .string();
}

namespace {
/// One identity per file whatever the spelling of its path.
std::string fileKey(const std::string &path) {
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(path, ec);
  if (ec)
    return fs::path(path).lexically_normal().string();
  return canonical.string();
}
} // namespace

int Sema::openModule(const std::string &path, const std::string &qualName,
                     const ast::ImportDecl *import) {
  std::string key = fileKey(path);
  auto known = moduleByPath.find(key);
  if (known != moduleByPath.end()) {
    for (const Loading &l : loading) {
      if (l.module == known->second) {
        reportImportCycle(known->second, *import);
        return -1;
      }
    }
    return known->second;
  }
  std::string error;
  int file = findOrLoadFile(path, error);
  if (file < 0) {
    if (import)
      diag.error(import->loc, "cannot import '" + import->path + "': " + error);
    else
      diag.error(SourceLoc{}, error);
    return -1;
  }
  int index = static_cast<int>(modules.size());
  modules.push_back(std::make_unique<ModuleInfo>());
  moduleByPath[key] = index;
  ModuleInfo &mod = *modules[index];
  mod.file = file;
  mod.path = sm.file(file).path;
  mod.qualName = qualName;
  mod.isMain = import == nullptr;
  mod.ast = parseFile(file, sm, diag);
  if (!mod.ast)
    return index;
  collectTopLevelNames(mod);

  loading.push_back({index, import});
  for (const ast::ImportDecl &imp : mod.ast->imports) {
    if (mod.duplicates.count(&imp))
      continue;
    int child = openModule(resolveImport(mod, imp.path), imp.alias, &imp);
    if (child >= 0 && !modules[child]->ast)
      child = -1; // its syntax errors are reported; uses are poisoned
    mod.imports[imp.alias] = child;
  }
  loading.pop_back();

  evaluateConsts(index);
  for (const ast::BlockDecl &b : mod.ast->blocks)
    if (!mod.duplicates.count(&b))
      checkBlockDecl(mod, b);
  return index;
}

void Sema::reportImportCycle(int module, const ast::ImportDecl &closing) {
  size_t start = 0;
  while (start < loading.size() && loading[start].module != module)
    ++start;
  std::string chain = "'" + modules[module]->path + "'";
  for (size_t i = start + 1; i < loading.size(); ++i)
    chain += " imports '" + modules[loading[i].module]->path + "', which";
  chain += " imports '" + modules[module]->path + "'";
  diag.error(closing.loc, "import cycle: " + chain);
  for (size_t i = loading.size(); i-- > start + 1;)
    if (loading[i].import)
      diag.note(loading[i].import->loc,
                "'" + modules[loading[i].module]->path + "' is imported here");
}

void Sema::collectTopLevelNames(ModuleInfo &mod) {
  // Every top-level name of a file shares one namespace; of two definitions
  // the later one in the file is the error, whatever kinds they are.
  struct Decl {
    std::string name;
    SourceLoc loc;
    const void *decl;
  };
  std::vector<Decl> decls;
  // alias -> the imported file's identity, as openModule computes it
  std::map<std::string, std::string> importKeys;
  for (const ast::ImportDecl &imp : mod.ast->imports) {
    // Importing one file twice under one alias is harmless, however its
    // path is spelt ("ic.mdl", "./ic.mdl"; "nn" and a path to the stdlib
    // file). Two different files under one alias stay an error below.
    std::string key = fileKey(resolveImport(mod, imp.path));
    auto same = importKeys.find(imp.alias);
    if (same != importKeys.end() && same->second == key) {
      mod.duplicates.insert(&imp);
      continue;
    }
    importKeys.emplace(imp.alias, key);
    decls.push_back({imp.alias, imp.loc, &imp});
  }
  for (const ast::ConstDecl &c : mod.ast->consts)
    decls.push_back({c.name, c.loc, &c});
  for (const ast::BlockDecl &b : mod.ast->blocks)
    decls.push_back({b.name, b.loc, &b});
  for (const ast::DataDecl &d : mod.ast->data)
    decls.push_back({d.name, d.loc, &d});
  for (const ast::EntryDecl &e : mod.ast->entries)
    decls.push_back({e.name, e.loc, &e});
  std::stable_sort(decls.begin(), decls.end(),
                   [](const Decl &a, const Decl &b) {
                     return std::make_pair(a.loc.line, a.loc.col) <
                            std::make_pair(b.loc.line, b.loc.col);
                   });
  std::map<std::string, SourceLoc> seen;
  for (const Decl &d : decls) {
    auto [it, fresh] = seen.emplace(d.name, d.loc);
    if (fresh)
      continue;
    diag.error(d.loc, "'" + d.name + "' is already defined in this file");
    diag.note(it->second, "previous definition is here");
    mod.duplicates.insert(d.decl);
  }
  for (const ast::ConstDecl &c : mod.ast->consts)
    if (!mod.duplicates.count(&c))
      mod.constDecls[c.name] = &c;
  for (const ast::BlockDecl &b : mod.ast->blocks)
    if (!mod.duplicates.count(&b))
      mod.blocks[b.name] = &b;
  for (const ast::DataDecl &d : mod.ast->data)
    if (!mod.duplicates.count(&d))
      mod.data[d.name] = &d;
}

std::string Sema::computeSourceHash() const {
  // 64-bit FNV-1a over each file's length and contents, in load order, so
  // that moving or renaming files leaves the hash alone.
  uint64_t hash = 14695981039346656037ull;
  auto mix = [&](unsigned char byte) {
    hash ^= byte;
    hash *= 1099511628211ull;
  };
  for (const std::unique_ptr<ModuleInfo> &mod : modules) {
    const std::string &buffer = sm.file(mod->file).buffer;
    uint64_t size = buffer.size();
    for (int i = 0; i < 8; ++i)
      mix(static_cast<unsigned char>(size >> (8 * i)));
    for (char c : buffer)
      mix(static_cast<unsigned char>(c));
  }
  char out[17];
  std::snprintf(out, sizeof out, "%016llx",
                static_cast<unsigned long long>(hash));
  return out;
}

} // namespace modelc::sema
