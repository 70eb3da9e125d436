// Names and sizes of the runtime's element types.
#include "runtime/io/DType.h"

#include <array>
#include <cmath>
#include <cstring>

namespace modelc::rt {

namespace {

struct DTypeInfo {
  DType dtype;
  size_t size;
  const char *name;
  const char *safetensorsName;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::F32, 4, "f32", "F32"},   {DType::F64, 8, "f64", "F64"},
    {DType::F16, 2, "f16", "F16"},   {DType::BF16, 2, "bf16", "BF16"},
    {DType::I32, 4, "i32", "I32"},   {DType::I64, 8, "i64", "I64"},
    {DType::U8, 1, "u8", "U8"},      {DType::U16, 2, "u16", "U16"},
    {DType::Bool, 1, "bool", "BOOL"}};

const DTypeInfo &info(DType dtype) {
  for (const DTypeInfo &entry : kDTypes)
    if (entry.dtype == dtype)
      return entry;
  // Every enumerator is in the table; an out-of-range value is treated as f32
  // rather than reading past it.
  return kDTypes[0];
}

} // namespace

size_t dtypeSize(DType dtype) { return info(dtype).size; }

const char *dtypeName(DType dtype) { return info(dtype).name; }

const char *safetensorsDTypeName(DType dtype) {
  return info(dtype).safetensorsName;
}

std::optional<DType> parseSafetensorsDType(std::string_view name) {
  for (const DTypeInfo &entry : kDTypes)
    if (name == entry.safetensorsName)
      return entry.dtype;
  return std::nullopt;
}

namespace {

template <typename T> T load(const uint8_t *p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

/// IEEE binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits.
double halfToDouble(uint16_t bits) {
  int exponent = (bits >> 10) & 0x1f, fraction = bits & 0x3ff;
  double sign = bits & 0x8000 ? -1.0 : 1.0;
  if (exponent == 0x1f)
    return fraction ? NAN : sign * INFINITY;
  if (exponent == 0) // subnormal
    return sign * std::ldexp(fraction, -24);
  return sign * std::ldexp(fraction + 1024, exponent - 25);
}

} // namespace

double elementAsDouble(DType dtype, const uint8_t *p) {
  switch (dtype) {
  case DType::F32:
    return load<float>(p);
  case DType::F64:
    return load<double>(p);
  case DType::F16:
    return halfToDouble(load<uint16_t>(p));
  case DType::BF16: // the high half of an f32
    return load<float>(std::array<uint8_t, 4>{0, 0, p[0], p[1]}.data());
  case DType::I32:
    return load<int32_t>(p);
  case DType::I64:
    return double(load<int64_t>(p));
  case DType::U8:
  case DType::Bool:
    return p[0];
  case DType::U16:
    return load<uint16_t>(p);
  }
  return load<float>(p);
}

double unitRoundoff(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return std::ldexp(1.0, -24);
  case DType::F64:
    return std::ldexp(1.0, -53);
  case DType::F16:
    return std::ldexp(1.0, -11);
  case DType::BF16:
    return std::ldexp(1.0, -8);
  default:
    return 0;
  }
}

} // namespace modelc::rt
