// MLIRGen: .mdl types, source locations and attribute values as MLIR.
#include "frontend/mlirgen/Emitter.h"

#include "dialects/mdl/MdlOps.h"

#include "mlir/IR/Diagnostics.h"

#include <type_traits>

namespace modelc::mlirgen {

mlir::Location Emitter::loc(SourceLoc sourceLoc) {
  if (!sourceLoc.isValid() || sourceLoc.file >= sm.numFiles())
    return mlir::UnknownLoc::get(&context);
  mlir::StringAttr &fileName = fileNames[sourceLoc.file];
  if (!fileName)
    fileName = mlir::StringAttr::get(&context, sm.file(sourceLoc.file).path);
  return mlir::FileLineColLoc::get(fileName, sourceLoc.line, sourceLoc.col);
}

mlir::Type Emitter::elementType(DType dtype) {
  mlir::Builder builder(&context);
  switch (dtype) {
  case DType::F32:
    return builder.getF32Type();
  case DType::F16:
    return builder.getF16Type();
  case DType::BF16:
    return builder.getBF16Type();
  case DType::F64:
    return builder.getF64Type();
  case DType::I32:
    return builder.getI32Type();
  case DType::I64:
    return builder.getI64Type();
  case DType::U8:
    return builder.getIntegerType(8, /*isSigned=*/false);
  case DType::U16:
    return builder.getIntegerType(16, /*isSigned=*/false);
  case DType::Bool:
    return builder.getI1Type();
  }
  return builder.getNoneType();
}

mlir::RankedTensorType Emitter::tensorType(const TensorType &type) {
  return mlir::RankedTensorType::get(type.shape, elementType(type.dtype));
}

mlir::Attribute Emitter::settingAttr(const Attr &value) {
  mlir::Builder builder(&context);
  return std::visit(
      [&](const auto &v) -> mlir::Attribute {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>)
          return builder.getI64IntegerAttr(v);
        else if constexpr (std::is_same_v<T, double>)
          return builder.getF64FloatAttr(v);
        else if constexpr (std::is_same_v<T, bool>)
          return builder.getBoolAttr(v);
        else if constexpr (std::is_same_v<T, std::string>)
          return builder.getStringAttr(v);
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
          return builder.getDenseI64ArrayAttr(v);
        else if constexpr (std::is_same_v<T, std::vector<double>>)
          return builder.getDenseF64ArrayAttr(v);
        else if constexpr (std::is_same_v<T, std::vector<std::string>>)
          return builder.getStrArrayAttr(
              llvm::SmallVector<llvm::StringRef>(v.begin(), v.end()));
        else
          return settingsDict(v);
      },
      value.value);
}

mlir::DictionaryAttr Emitter::settingsDict(const AttrDict &dict) {
  llvm::SmallVector<mlir::NamedAttribute> entries;
  for (const auto &[key, value] : dict)
    entries.emplace_back(mlir::StringAttr::get(&context, key),
                         settingAttr(value));
  return mlir::DictionaryAttr::get(&context, entries);
}

mlir::LogicalResult Emitter::opAttributes(const Op &op, mlir::Location loc,
                                          mlir::NamedAttrList &attrs) {
  for (const auto &[key, value] : op.attrs) {
    const auto *flag = std::get_if<bool>(&value.value);
    const auto *text = std::get_if<std::string>(&value.value);
    if (flag) {
      // Flags are UnitAttrs in the dialect: present means true.
      if (*flag)
        attrs.append(key, mlir::UnitAttr::get(&context));
    } else if (op.name == "compare" && key == "predicate" && text) {
      std::optional<mlir::mdl::CmpPredicate> predicate =
          mlir::mdl::symbolizeCmpPredicate(*text);
      if (!predicate)
        return mlir::emitError(loc)
               << "internal error: unknown comparison '" << *text << "'";
      attrs.append(key, mlir::mdl::CmpPredicateAttr::get(&context, *predicate));
    } else if ((op.name == "param_ref" || op.name == "load") &&
               key == "name" && text) {
      attrs.append(key, mlir::FlatSymbolRefAttr::get(&context, *text));
    } else {
      attrs.append(key, settingAttr(value));
    }
  }
  return mlir::success();
}

namespace {
/// One element of `elementType` holding `value` (an int64_t or a double).
template <typename T>
mlir::Attribute elementAttr(mlir::Type elementType, T value) {
  if (auto floatType = llvm::dyn_cast<mlir::FloatType>(elementType))
    return mlir::FloatAttr::get(floatType, static_cast<double>(value));
  auto intType = llvm::cast<mlir::IntegerType>(elementType);
  unsigned width = intType.getWidth();
  if (width == 1)
    return mlir::IntegerAttr::get(intType, llvm::APInt(1, value != 0));
  llvm::APInt bits(64, static_cast<uint64_t>(static_cast<int64_t>(value)),
                   /*isSigned=*/true);
  return mlir::IntegerAttr::get(intType, bits.sextOrTrunc(width));
}

template <typename T>
llvm::SmallVector<mlir::Attribute> elementAttrs(mlir::Type elementType,
                                                const std::vector<T> &values) {
  llvm::SmallVector<mlir::Attribute> attrs;
  attrs.reserve(values.size());
  for (T value : values)
    attrs.push_back(elementAttr(elementType, value));
  return attrs;
}
} // namespace

mlir::DenseElementsAttr Emitter::constantValue(const Op &op,
                                               mlir::RankedTensorType type,
                                               mlir::Location loc) {
  mlir::Type elementType = type.getElementType();
  if (!llvm::isa<mlir::FloatType, mlir::IntegerType>(elementType)) {
    mlir::emitError(loc) << "internal error: constant of type " << type;
    return {};
  }
  auto value = op.attrs.find("value");
  if (value != op.attrs.end()) {
    if (const auto *i = std::get_if<int64_t>(&value->second.value))
      return mlir::DenseElementsAttr::get(type, elementAttr(elementType, *i));
    if (const auto *d = std::get_if<double>(&value->second.value))
      return mlir::DenseElementsAttr::get(type, elementAttr(elementType, *d));
    if (const auto *b = std::get_if<bool>(&value->second.value))
      return mlir::DenseElementsAttr::get(
          type, elementAttr(elementType, int64_t(*b)));
  }
  auto values = op.attrs.find("values");
  if (values != op.attrs.end()) {
    llvm::SmallVector<mlir::Attribute> elements;
    if (const auto *i =
            std::get_if<std::vector<int64_t>>(&values->second.value))
      elements = elementAttrs(elementType, *i);
    else if (const auto *d =
                 std::get_if<std::vector<double>>(&values->second.value))
      elements = elementAttrs(elementType, *d);
    if (static_cast<int64_t>(elements.size()) == type.getNumElements())
      return mlir::DenseElementsAttr::get(type, elements);
  }
  mlir::emitError(loc) << "internal error: constant of type " << type
                       << " without a matching 'value' or 'values'";
  return {};
}

} // namespace modelc::mlirgen
