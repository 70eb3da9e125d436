// Parameter initialisers of spec §6, deterministic from the run's seed.
#pragma once

#include "runtime/driver/Arena.h"

namespace modelc::rt {

/// The Rng stream of a parameter: a hash of its name (below the data-order
/// streams), so adding, removing or reordering parameters leaves the values
/// of the others unchanged.
uint64_t parameterStream(const std::string &name);

/// Fills `dst` (the parameter's f32 or f64 elements) from its initialiser.
Status initializeParameter(const ParamInfo &param, uint64_t seed, void *dst);

/// Initialises every parameter of the manifest in the arena.
Status initializeParameters(const Manifest &manifest, uint64_t seed,
                            Arena &arena);

} // namespace modelc::rt
