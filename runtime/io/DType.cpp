// Names and sizes of the runtime's element types.
#include "runtime/io/DType.h"

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

} // namespace modelc::rt
