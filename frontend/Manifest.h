// The manifest of a compiled program as JSON (`modelc --emit=manifest`):
// entries with their inputs, outputs and settings, parameters, data sets and
// the source hash. Codegen embeds the same facts in the executable.
#pragma once

#include "frontend/Program.h"

#include <string>

namespace modelc {

/// The manifest of `program`, pretty-printed with a two-space indent and a
/// trailing newline. Its keys (stable; tests and tools read them):
///   source, source_hash,
///   entries[]: kind ("train"|"infer"), name, inputs[], outputs[] (each
///              {name, dtype, shape}), data (null for infer), settings,
///              parameters (full names in first-use order),
///   parameters[]: name, dtype, shape, count, init {kind, args},
///   data[]: name, fields[] {name, dtype, shape (per sample),
///           source {kind, path, key (npz only), windows}},
///   total_parameters.
std::string manifestJSON(const Program &program);

/// A plain-text table of the parameters (name, dtype, shape, element count)
/// with the total, for people (`modelc --emit=params`).
std::string parameterTable(const Program &program);

} // namespace modelc
