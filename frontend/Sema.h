// Semantic analysis and elaboration, shared by the Sema*.cpp files (not a
// public header: Frontend.h is the interface). Sema is an interpreter over
// the AST: it loads modules, folds consts, and walks each entry, evaluating
// compile-time values and emitting ops into Functions through GraphBuilder;
// every distinct block call specialises the block once.
#pragma once

#include "frontend/AST.h"
#include "frontend/Builtins.h"
#include "frontend/Frontend.h"
#include "frontend/Program.h"
#include "frontend/Value.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace modelc::sema {

/// What introduced a name in a block or entry body; decides whether `x = e`
/// may rebind it and whether `let` may shadow it.
enum class BindingKind { Let, Arg, SizeVar, LoopVar, Param, Input };

struct Binding {
  CValue value;
  SourceLoc loc;
  BindingKind kind = BindingKind::Let;
};
using Scope = std::map<std::string, Binding>;

/// One loaded file and its top-level names.
struct ModuleInfo {
  std::unique_ptr<ast::Module> ast; // null when the file did not parse
  int file = -1;
  std::string path;
  std::string qualName; // "" for the main file, else its alias ("nn")
  bool isMain = false;
  /// Import alias -> module index; -1 when the import failed (uses of the
  /// alias are then silently poisoned).
  std::map<std::string, int> imports;
  std::map<std::string, const ast::ConstDecl *> constDecls;
  std::map<std::string, CValue> consts; // evaluated so far, in order
  std::map<std::string, const ast::BlockDecl *> blocks;
  std::map<std::string, const ast::DataDecl *> data;
  std::set<const void *> duplicates;          // declarations to skip
  std::set<const ast::BlockDecl *> badBlocks; // signature errors reported
};

/// A call site on the way from a function down to a `param` statement.
struct CallSite {
  std::string callee;
  SourceLoc site;
};
using SlotOrigin = std::vector<CallSite>; // outermost call first

/// A parameter created in the entry being elaborated.
struct EntryParam {
  TensorType type;
  Initializer init;
  SourceLoc loc;
  SlotOrigin origin;
  bool buffer = false; // a module buffer, read with "load"
};

/// State of the train or infer entry being elaborated.
struct EntryState {
  const ast::EntryDecl *decl = nullptr;
  std::string label; // "train 'fashion'"
  std::map<std::string, EntryParam> created;
  std::set<std::string> scopeClashes;   // reported once per scope name
  std::map<std::string, int> paramRefs; // full name -> param_ref value
  std::vector<std::string> usedParams;
  bool isTrain = false;
  bool batchReady = false; // data and batch are known (or failed)
  std::map<std::string, CValue> batchFields;
  std::vector<std::string> fieldNames;
};

/// A function being elaborated: a specialised block or an entry body.
struct FunctionState {
  FunctionState(int module, DiagnosticEngine &diag)
      : builder(fn, diag), module(module) {}
  FunctionState(const FunctionState &) = delete;
  FunctionState &operator=(const FunctionState &) = delete;

  Function fn;
  GraphBuilder builder;
  int module;
  /// Blocks: scopes[0] holds the arguments and size variables, scopes[1] the
  /// body, further ones each `for` iteration. Entries: one scope.
  std::vector<Scope> scopes;
  /// Names that `let` may not redefine live in scopes from this index on.
  size_t firstLocalScope = 0;
  Scope signature; // arguments and size variables as bound by the call
  std::map<std::string, std::string> sizeVarOrigin; // size var -> argument
  std::vector<SlotOrigin> slotOrigins;              // parallel to fn.params
  std::map<std::string, int> createdSlots;          // path -> slot index
  std::map<std::string, int> tiedSlots;             // path -> slot index
  std::string fullPrefix; // scope of this function relative to the entry
  EntryState *entry = nullptr;
  const ast::BlockDecl *block = nullptr;
  bool inMetrics = false;
  bool returned = false;
  bool stopped = false;        // an assert failed: the rest is not elaborated
  bool poisonedResult = false; // a returned value could not be computed
  std::vector<CValue> returnValues;
  std::vector<SourceLoc> returnLocs;
  SourceLoc returnLoc;
};

/// What a specialised function carries besides the Function itself.
struct FunctionInfo {
  std::vector<SlotOrigin> slotOrigins;
};

/// One parameter of a compile-time call (initialiser, optimizer, schedule,
/// data source). Float accepts an int; List means a list of numbers.
struct ConstParam {
  const char *name;
  CValue::Kind kind;
  std::optional<CValue> defaultValue;
  /// With kind List: a list of strings, not of numbers.
  bool strings = false;
};

/// The result of matching a tensor against a declared type.
struct UnifyResult {
  bool ok = true;
  bool poisoned = false; // an error in the declared type was reported
  std::string reason;    // why it does not match, when useful
  std::string expected;  // the declared type evaluated, when known
};

class Sema {
public:
  Sema(const FrontendOptions &options, SourceManager &sm,
       DiagnosticEngine &diag, Program &program);
  bool run(const std::string &path);

  //===--------------------------------------------------------------------===//
  // Modules, consts and -D (SemaModules.cpp, SemaConsts.cpp)
  //===--------------------------------------------------------------------===//
  int openModule(const std::string &path, const std::string &qualName,
                 const ast::ImportDecl *import);
  int findOrLoadFile(const std::string &path, std::string &error);
  std::string resolveImport(const ModuleInfo &importer,
                            const std::string &spec) const;
  void reportImportCycle(int module, const ast::ImportDecl &closing);
  void collectTopLevelNames(ModuleInfo &mod);
  void evaluateConsts(int module);
  std::optional<CValue> defineOverride(const ast::ConstDecl &decl,
                                       const CValue &declared);
  void checkDefines();
  std::string computeSourceHash() const;

  //===--------------------------------------------------------------------===//
  // Declarations checked once (SemaDecls.cpp)
  //===--------------------------------------------------------------------===//
  void checkBlockDecl(ModuleInfo &mod, const ast::BlockDecl &decl);
  bool checkTypeExpr(const ast::TypeExpr &type, bool allowScalar,
                     bool allowVariadic);
  void checkBodyStructure(const ast::StmtList &body);

  //===--------------------------------------------------------------------===//
  // Expressions (SemaExprs.cpp, SemaCalls.cpp)
  //===--------------------------------------------------------------------===//
  CValue eval(const ast::Expr *expr);
  CValue evalName(const ast::NameExpr &e);
  /// The name `weight_ih_l{i}` spells, its parts evaluated (ints >= 0).
  std::optional<std::string>
  interpolatedName(const ast::InterpolatedNameExpr &e);
  CValue evalMember(const ast::MemberExpr &e);
  CValue evalUnary(const ast::UnaryExpr &e);
  CValue evalBinary(const ast::BinaryExpr &e);
  CValue evalIndex(const ast::IndexExpr &e);
  CValue evalList(const ast::ListExpr &e);
  CValue evalCall(const ast::CallExpr &e, const std::string *scope,
                  SourceLoc scopeLoc);
  /// What a call names: a block (with its module and qualified name) or a
  /// built-in.
  struct Callee {
    const ast::BlockDecl *block = nullptr;
    int module = -1;
    std::string qualName;
    std::string builtin;
  };
  /// The callee of `e`; nullopt after reporting why it cannot be called.
  std::optional<Callee> resolveCallee(const ast::CallExpr &e);
  /// Why `n` (not a block or built-in of the module) cannot be called.
  std::string notCallableMessage(const std::string &n, bool own);
  CValue evalAs(const ast::AsExpr &e);
  std::optional<std::string> evalPath(const std::vector<ast::PathComponent> &);
  /// Compile-time values of a given kind; nullopt after reporting (or on a
  /// poisoned value, silently).
  std::optional<int64_t> evalInt(const ast::Expr *e, const std::string &what);
  std::optional<double> evalFloat(const ast::Expr *e, const std::string &what);
  std::optional<bool> evalBool(const ast::Expr *e, const std::string &what);
  std::optional<std::string> evalString(const ast::Expr *e,
                                        const std::string &what);
  std::optional<std::vector<CValue>>
  bindConstCall(const ast::Expr &call, const std::string &what,
                const std::vector<ConstParam> &params);
  std::optional<std::vector<CValue>>
  bindConstArgs(const ast::CallExpr &call, const std::string &what,
                const std::vector<ConstParam> &params);
  const Binding *lookup(const std::string &name) const;
  Binding *lookupMutable(const std::string &name);
  /// The module named by an import alias in the current module: its index,
  /// -1 for a failed import, nullopt when `name` is no alias.
  std::optional<int> importedModule(const std::string &name) const;
  std::string describe(const CValue &v) const;
  /// A safety net over the built-ins: the values added to the current
  /// function since `before` must have sizes that fit in int64. Reports at
  /// `loc` and returns a poisoned value otherwise, else `result`.
  CValue checkNewValues(size_t before, const std::string &what, SourceLoc loc,
                        std::optional<CValue> result);

  //===--------------------------------------------------------------------===//
  // Block calls, unification and specialisation (SemaBlocks.cpp, SemaUnify.cpp)
  //===--------------------------------------------------------------------===//
  CValue callBlock(int module, const ast::BlockDecl &decl,
                   const std::string &qualName, const ast::CallExpr &call,
                   const std::vector<Arg> &args, const std::string *scope);
  bool bindBlockArgs(const ast::BlockDecl &decl, const std::string &qualName,
                     const std::vector<Arg> &args, SourceLoc loc,
                     std::vector<const Arg *> &bound);
  bool bindSignature(FunctionState &callee, const ast::BlockDecl &decl,
                     const std::string &qualName,
                     const std::vector<const Arg *> &bound,
                     std::vector<int> &tensorArgs, std::string &key);
  void elaborateBody(FunctionState &st, const ast::BlockDecl &decl,
                     const std::string &qualName, SourceLoc callSite);
  void checkReturn(FunctionState &st, const ast::BlockDecl &decl,
                   const std::string &qualName);
  std::string uniqueSymbol(const std::string &qualName);
  std::string signatureText(const ast::BlockDecl &decl,
                            const std::string &qualName) const;
  UnifyResult unify(const ast::TypeExpr &type, const TensorType &actual,
                    const std::string &argName);
  /// unify's `*name` dimension, which holds `part` of the actual shape;
  /// false when unify must stop (r poisoned).
  bool unifyVariadicDim(const ast::DimExpr &d,
                        const std::vector<int64_t> &part,
                        const std::string &argName,
                        std::vector<int64_t> &expected, UnifyResult &r);
  /// unify's dimension `pos`, which is `got` in the actual shape.
  bool unifyDim(const ast::DimExpr &d, int64_t got, size_t pos,
                const std::string &argName, std::vector<int64_t> &expected,
                UnifyResult &r);
  std::optional<TensorType> evalTensorType(const ast::TypeExpr &type,
                                           const std::string &what);

  //===--------------------------------------------------------------------===//
  // Parameters and scopes (SemaParams.cpp)
  //===--------------------------------------------------------------------===//
  void execParam(const ast::ParamStmt &s);
  std::optional<Initializer> evalInitializer(const ast::Expr *init,
                                             const TensorType &type);
  CValue evalParamRef(const ast::ParamRefExpr &e);
  std::vector<int> passCalleeSlots(int calleeIndex, const std::string &scope,
                                   const std::string &calleeName,
                                   SourceLoc callSite);
  int addCreatedSlot(FunctionState &st, const std::string &path,
                     const TensorType &type, const Initializer &init,
                     bool buffer, SourceLoc loc, const SlotOrigin &origin);
  int addTiedSlot(FunctionState &st, const std::string &path,
                  const TensorType &type, SourceLoc loc,
                  const SlotOrigin &origin);
  int entryParam(const std::string &name, const TensorType &type,
                 const Initializer &init, bool buffer, SourceLoc loc,
                 const SlotOrigin &origin);
  int entryTiedParam(const std::string &name, const TensorType &type,
                     SourceLoc loc, const SlotOrigin &origin);
  int paramRef(const std::string &name, const TensorType &type, SourceLoc loc);
  void reportScopeClash(const std::string &name, SourceLoc loc,
                        const SlotOrigin &origin);
  void reportDuplicateParam(const std::string &name, SourceLoc firstLoc,
                            const SlotOrigin &firstOrigin, SourceLoc loc,
                            const SlotOrigin &origin);
  void mergeProgramParam(const std::string &name, const EntryParam &p);
  std::optional<TensorType> findCreatedParam(const std::string &fullName);

  //===--------------------------------------------------------------------===//
  // Statements (SemaStmts.cpp)
  //===--------------------------------------------------------------------===//
  void execStmts(const ast::StmtList &stmts);
  void execStmt(const ast::Stmt &s);
  void execLet(const ast::LetStmt &s);
  void execAssign(const ast::AssignStmt &s);
  void execFor(const ast::ForStmt &s);
  void execIf(const ast::IfStmt &s);
  void execAssert(const ast::AssertStmt &s);
  void execReturn(const ast::ReturnStmt &s);
  void execExprStmt(const ast::ExprStmt &s);
  bool define(const std::string &name, const CValue &value, SourceLoc loc,
              BindingKind kind);
  bool tick(SourceLoc loc);

  //===--------------------------------------------------------------------===//
  // Data and entries (SemaData.cpp, SemaEntries.cpp, SemaSettings.cpp)
  //===--------------------------------------------------------------------===//
  int dataSetIndex(int module, const std::string &name, SourceLoc useLoc);
  int resolveDataRef(const ast::Expr *e, const std::string &what);
  std::optional<DataSource>
  evalDataSource(const ast::Expr *e, const TensorType &type, bool inWindows);
  void elaborateEntry(const ast::EntryDecl &decl);
  void elaborateTrain(FunctionState &st, Entry &entry);
  struct TrainStatements;
  TrainStatements sortTrainStatements(const EntryState &es);
  /// The settings other than `data` and `batch` into `out`; the loss.
  std::optional<int>
  evalTrainSettings(const FunctionState &st, const TrainStatements &statements,
                    int data, AttrDict &out,
                    std::vector<std::pair<std::string, int>> &metrics);
  void checkRequiredTrainSettings(
      const EntryState &es, const Entry &entry,
      const std::map<std::string, const ast::Stmt *> &given);
  /// Defaults, and the checks across settings (grad_scaler, ZeRO, warmup).
  void completeTrainSettings(const EntryState &es, Entry &entry,
                             std::map<std::string, const ast::Stmt *> &given);
  void elaborateInfer(FunctionState &st, Entry &entry);
  void bindBatchFields(FunctionState &st, Entry &entry, int dataSet,
                       int64_t batch, SourceLoc batchLoc);
  void checkEvalData(int trainData, int evalData, SourceLoc loc);
  void rejectEntryStmt(const ast::Stmt &s, const std::string &label,
                       const char *allowed);
  std::optional<int64_t> intSetting(const ast::Expr *e, const std::string &name,
                                    int64_t min);
  std::optional<double> positiveFloatSetting(const ast::Expr *e,
                                             const std::string &name);
  std::optional<AttrDict> evalOptimizer(const ast::Expr *e);
  /// `param_groups { NAME = group(match, max_rank, weight_decay) ... }`.
  /// `optimizer` is the train entry's evaluated optimizer setting, when
  /// there is one: a group may set only its arguments.
  std::optional<AttrDict> evalParamGroups(const ast::GroupStmt &g,
                                          const AttrDict *optimizer);
  std::optional<AttrDict> evalSchedule(const ast::Expr *e);
  std::optional<std::string> evalPrecision(const ast::Expr *e);
  std::optional<AttrDict> evalSettingsGroup(const ast::GroupStmt &g,
                                            int &dataIndex);
  void evalMetrics(const ast::GroupStmt &g,
                   std::vector<std::pair<std::string, int>> &metrics);
  std::optional<int> evalLoss(const ast::Expr *e);
  /// A bare name that is no local or const: `every = epoch`.
  std::optional<std::string> bareWord(const ast::Expr *e);

  //===--------------------------------------------------------------------===//
  // State
  //===--------------------------------------------------------------------===//
  FunctionState &cur() { return *frames.back(); }
  const FunctionState &cur() const { return *frames.back(); }
  ModuleInfo &curModule() { return *modules[cur().module]; }
  const ModuleInfo &curModule() const { return *modules[cur().module]; }

  const FrontendOptions &options;
  SourceManager &sm;
  DiagnosticEngine &diag;
  Program &program;
  std::string stdlibDir;

  std::vector<std::unique_ptr<ModuleInfo>> modules;
  std::map<std::string, int> moduleByPath;
  struct Loading {
    int module;
    const ast::ImportDecl *import; // how it was reached; null for the main
  };
  std::vector<Loading> loading; // modules whose imports are being loaded

  std::vector<FunctionState *> frames;
  std::vector<FunctionInfo> functionInfo;     // parallel to program.functions
  std::map<std::string, int> specialisations; // key -> function, -1 failed
  std::set<std::string> usedSymbols;
  std::map<std::string, unsigned> nextSymbolSuffix; // uniqueSymbol
  std::set<const ast::BlockDecl *> activeBlocks;
  std::map<std::pair<int, std::string>, int> dataSetByName;
  std::map<std::string, size_t> paramIndex; // program.params by name
  int64_t parameterElements = 0; // their total, checked against overflow
  std::map<std::string, std::string> paramOwner; // name -> entry label

  /// Duplicate parameters reported for the call whose slots are being
  /// passed (only the first is reported); -1 outside such a call.
  int duplicatesOfCall = -1;
  unsigned depth = 0;
  bool depthReported = false;
  uint64_t steps = 0;
  bool aborted = false;
};

/// RAII nesting guard: every recursive step of elaboration holds one, so a
/// pathological input ends with an error instead of a stack overflow.
class DepthGuard {
public:
  explicit DepthGuard(Sema &sema, SourceLoc loc);
  ~DepthGuard() { --sema.depth; }
  DepthGuard(const DepthGuard &) = delete;
  DepthGuard &operator=(const DepthGuard &) = delete;
  bool ok() const { return ok_; }

private:
  Sema &sema;
  bool ok_;
};

//===----------------------------------------------------------------------===//
// Text for messages (SemaText.cpp)
//===----------------------------------------------------------------------===//

/// `expr` as it reads in source ("(h - k) / s + 1").
std::string exprText(const ast::Expr *expr);
/// `type` as written ("f32[*lead, n]", "int").
std::string typeExprText(const ast::TypeExpr &type);
/// How a value reads in messages: "f32[2, 3]", "int 3", "list [1, 2]";
/// tensors are looked up in `fn`.
std::string describeValue(const CValue &v, const Function &fn);
/// Shortest text that reads back as `v`, always with a '.' or exponent.
std::string formatFloat(double v);
/// A compile-time value as a .mdl literal ("3", "0.5", "true", "\"a\"").
std::string literalText(const CValue &v);
std::string initializerText(const Initializer &init);
/// "a, b and c" style list: "a, b, c".
std::string joinNames(const std::vector<std::string> &names);
/// "a, b and c".
std::string joinWithAnd(const std::vector<std::string> &items);
/// The candidate closest to `name` by edit distance, or "" when none is close.
std::string closestName(const std::string &name,
                        const std::vector<std::string> &candidates);
/// " (did you mean 'x'?)" or "".
std::string didYouMean(const std::string &name,
                       const std::vector<std::string> &candidates);
/// "a.b" from a prefix and a path; either may be empty.
std::string joinPath(const std::string &prefix, const std::string &path);
/// Product of `shape`, or nullopt on int64 overflow.
std::optional<int64_t> checkedElementCount(const std::vector<int64_t> &shape);

/// Limits that keep elaboration finite on any input.
constexpr unsigned kMaxDepth = 2100;
constexpr int64_t kMaxLoopIterations = 100000;
constexpr uint64_t kMaxSteps = 2000000;

} // namespace modelc::sema
