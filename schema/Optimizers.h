// The optimizers and their hyperparameters as C++ tables, from the one
// definition in schema/Optimizers.def. Plain C++ (no MLIR, no flatbuffers),
// so that the frontend, the passes, codegen and the runtime all include it.
#pragma once

#include <cmath>
#include <cstddef>
#include <string_view>

namespace modelc::optimizers {

/// An argument's DEFAULT in Optimizers.def when it has none.
inline constexpr double kRequired = NAN;

/// One numeric hyperparameter (Optimizers.def, MODELC_OPTIMIZER_HYPER).
struct HyperDef {
  const char *key;
  double defaultValue;
  double max;
  bool maxIncluded;
  const char *expected;

  /// Whether `v` is an allowed value: >= 0 and below (or at) the maximum.
  constexpr bool allows(double v) const {
    return v >= 0 && (maxIncluded ? v <= max : v < max);
  }
};

inline constexpr HyperDef kHypers[] = {
#define MODELC_OPTIMIZER_HYPER(KEY, DEFAULT, MAX, MAX_INCLUDED, EXPECTED)      \
  {#KEY, DEFAULT, MAX, MAX_INCLUDED, EXPECTED},
#include "schema/Optimizers.def"
};

inline constexpr const char *kFlags[] = {
#define MODELC_OPTIMIZER_FLAG(KEY) #KEY,
#include "schema/Optimizers.def"
};

/// The hyperparameters by name, with their defaults: a struct whose fields
/// are the keys (torch.optim's spelling, hence snake_case), so that both
/// sides address them as `hypers.weight_decay`.
struct Hypers {
#define MODELC_OPTIMIZER_HYPER(KEY, DEFAULT, ...) double KEY = DEFAULT;
#include "schema/Optimizers.def"

  /// The field of hyperparameter `key`; nullptr when there is none.
  double *find(std::string_view key) {
#define MODELC_OPTIMIZER_HYPER(KEY, ...)                                       \
  if (key == #KEY)                                                             \
    return &KEY;
#include "schema/Optimizers.def"
    return nullptr;
  }
  const double *find(std::string_view key) const {
    return const_cast<Hypers *>(this)->find(key);
  }
};

/// One argument of an optimizer's constructor (see Optimizers.def).
struct ArgDef {
  const char *key = nullptr;
  double defaultValue = kRequired;

  bool isRequired() const { return std::isnan(defaultValue); }
};

/// An optimizer kind and its constructor's arguments in torch.optim's order
/// (the unused trailing entries have a null key).
struct KindDef {
  const char *name;
  ArgDef args[6];
};

inline constexpr KindDef kKinds[] = {
#define MODELC_OPTIMIZER(NAME, ...) {#NAME, {__VA_ARGS__}},
#include "schema/Optimizers.def"
};

/// The kind called `name`; nullptr when there is none.
inline const KindDef *findKind(std::string_view name) {
  for (const KindDef &kind : kKinds)
    if (name == kind.name)
      return &kind;
  return nullptr;
}

/// The hyperparameter called `key`; nullptr when there is none.
inline const HyperDef *findHyper(std::string_view key) {
  for (const HyperDef &hyper : kHypers)
    if (key == hyper.key)
      return &hyper;
  return nullptr;
}

/// Whether `key` is a flag (Optimizers.def, MODELC_OPTIMIZER_FLAG).
inline bool isFlag(std::string_view key) {
  for (const char *flag : kFlags)
    if (key == flag)
      return true;
  return false;
}

} // namespace modelc::optimizers
