// Element types of data, parameters and files, with their names in `.mdl`
// sources, safetensors headers and sizes.
#pragma once

#include <cstddef>
#include <cstdint>
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

/// The value of element 0 at `p` (any alignment) as a double: exact for
/// every type but i64 and u64 magnitudes above 2^53.
double elementAsDouble(DType dtype, const uint8_t *p);

/// The unit roundoff of a floating-point type (2^-24 for f32, 2^-8 for
/// bf16), 0 for integers and bool.
double unitRoundoff(DType dtype);

} // namespace modelc::rt
