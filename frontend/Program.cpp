// Small helpers of the elaborated program: dtype names and tensor types.
#include "frontend/Program.h"

#include <sstream>

namespace modelc {

namespace {
struct DTypeName {
  DType type;
  const char *name;
};
constexpr DTypeName kDTypeNames[] = {
    {DType::F32, "f32"}, {DType::F16, "f16"}, {DType::BF16, "bf16"},
    {DType::F64, "f64"}, {DType::I32, "i32"}, {DType::I64, "i64"},
    {DType::U8, "u8"},   {DType::U16, "u16"}, {DType::Bool, "bool"},
};
} // namespace

const char *dtypeName(DType t) {
  for (const DTypeName &d : kDTypeNames)
    if (d.type == t)
      return d.name;
  return "?";
}

bool parseDType(const std::string &name, DType &out) {
  for (const DTypeName &d : kDTypeNames) {
    if (name == d.name) {
      out = d.type;
      return true;
    }
  }
  return false;
}

bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 ||
         t == DType::F64;
}

bool isInteger(DType t) {
  return t == DType::I32 || t == DType::I64 || t == DType::U8 ||
         t == DType::U16;
}

int64_t TensorType::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string TensorType::str() const {
  std::ostringstream os;
  os << dtypeName(dtype) << '[';
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}

int64_t Program::totalParameterCount() const {
  int64_t total = 0;
  for (const Parameter &p : params)
    if (!p.buffer) // as PyTorch counts model.parameters()
      total += p.type.numElements();
  return total;
}

} // namespace modelc
