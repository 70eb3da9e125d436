// Element types of data, parameters and files, with their names in `.mdl`
// sources, safetensors headers and sizes.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace modelc::rt {

/// The element types of spec §4, in the manifest's order.
enum class DType { F32, F64, F16, BF16, I32, I64, U8, U16, Bool };

/// Bytes per element.
size_t dtypeSize(DType dtype);

/// The `.mdl` spelling: "f32", "u8", "bool", ...
const char *dtypeName(DType dtype);

/// The safetensors spelling: "F32", "BF16", "BOOL", ...
const char *safetensorsDTypeName(DType dtype);

/// The inverse of safetensorsDTypeName; nullopt for names we do not support
/// (including valid safetensors types such as "I8" or "F8_E4M3").
std::optional<DType> parseSafetensorsDType(std::string_view name);

} // namespace modelc::rt
