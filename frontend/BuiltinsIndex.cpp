// Indexing with compile-time bounds: `x[:, 0:T]`, `x[..., -1]`, `x[::2]` on
// tensors (a `slice`, then a `reshape` that drops integer-indexed axes), and
// `xs[i]` on compile-time lists. Bounds follow Python: negative counts from
// the end, omitted means the whole axis, out-of-range slice bounds clamp.
#include "frontend/BuiltinsArgs.h"

#include <algorithm>

namespace modelc {

using namespace builtins;
using ItemKind = ast::IndexItem::Kind;

namespace {
std::string sliceText(const IndexSpec &item) {
  auto part = [](const std::optional<int64_t> &v) {
    return v ? std::to_string(*v) : std::string();
  };
  std::string text = part(item.lo) + ":" + part(item.hi);
  if (item.step)
    text += ":" + std::to_string(*item.step);
  return text;
}

/// Python's slice.indices for a positive step: the clamped [lo, hi).
std::pair<int64_t, int64_t> sliceBounds(const IndexSpec &item, int64_t size) {
  auto bound = [size](std::optional<int64_t> v, int64_t dflt) {
    if (!v)
      return dflt;
    int64_t b = *v < 0 ? *v + size : *v;
    return std::clamp<int64_t>(b, 0, size);
  };
  return {bound(item.lo, 0), bound(item.hi, size)};
}

int64_t sliceLength(int64_t lo, int64_t hi, int64_t step) {
  return hi > lo ? (hi - lo - 1) / step + 1 : 0;
}

bool checkStep(GraphBuilder &builder, const IndexSpec &item) {
  if (!item.step || *item.step > 0)
    return true;
  builder.diagnostics().error(item.loc, "slice step must be positive, got " +
                                            std::to_string(*item.step));
  return false;
}

std::optional<CValue> indexList(const Arg &base,
                                const std::vector<IndexSpec> &items,
                                SourceLoc loc, GraphBuilder &builder) {
  const std::vector<CValue> &list = base.value.list;
  const int64_t n = static_cast<int64_t>(list.size());
  DiagnosticEngine &diag = builder.diagnostics();
  if (items.size() != 1 || items[0].kind == ItemKind::Ellipsis) {
    diag.error(items.empty() ? loc : items.back().loc,
               "a list takes one index or slice, got " +
                   std::to_string(items.size()) + " items");
    return std::nullopt;
  }
  const IndexSpec &item = items[0];
  if (item.kind == ItemKind::Single) {
    int64_t i = item.index.value_or(0);
    if (i < -n || i >= n) {
      diag.error(item.loc, "index " + std::to_string(i) +
                               " is out of range for a list of " +
                               std::to_string(n) + " elements");
      return std::nullopt;
    }
    return list[i < 0 ? i + n : i];
  }
  if (!checkStep(builder, item))
    return std::nullopt;
  auto [lo, hi] = sliceBounds(item, n);
  int64_t step = item.step.value_or(1);
  // Counted, not stepped: `i += step` would overflow for a huge step.
  std::vector<CValue> result;
  for (int64_t k = 0, count = sliceLength(lo, hi, step); k < count; ++k)
    result.push_back(list[lo + k * step]);
  return CValue::ofList(std::move(result));
}
} // namespace

std::optional<CValue> applyIndex(const Arg &base,
                                 const std::vector<IndexSpec> &items,
                                 SourceLoc loc, GraphBuilder &builder) {
  DiagnosticEngine &diag = builder.diagnostics();
  if (base.value.kind == CValue::Kind::List)
    return indexList(base, items, loc, builder);
  if (!base.value.isTensor()) {
    diag.error(base.loc, "cannot index " + describe(base.value, builder) +
                             ": only tensors and lists can be indexed");
    return std::nullopt;
  }
  const TensorType type = builder.typeOf(base.value);
  const int64_t rank = static_cast<int64_t>(type.shape.size());

  int64_t explicitCount = 0;
  bool sawEllipsis = false;
  for (const IndexSpec &item : items) {
    if (item.kind != ItemKind::Ellipsis) {
      if (++explicitCount > rank) {
        diag.error(item.loc, "too many indices for " + type.str() + ": " +
                                 std::to_string(rank) + " axes");
        return std::nullopt;
      }
      continue;
    }
    if (sawEllipsis) {
      diag.error(item.loc, "an index may contain '...' only once");
      return std::nullopt;
    }
    sawEllipsis = true;
  }

  std::vector<int64_t> starts(rank, 0), limits = type.shape, strides(rank, 1);
  std::vector<bool> dropped(rank, false);
  int64_t dim = 0;
  for (const IndexSpec &item : items) {
    if (item.kind == ItemKind::Ellipsis) {
      dim += rank - explicitCount;
      continue;
    }
    const int64_t size = type.shape[dim];
    if (item.kind == ItemKind::Single) {
      int64_t i = item.index.value_or(0);
      if (i < -size || i >= size) {
        diag.error(item.loc, "index " + std::to_string(i) +
                                 " is out of range for axis " +
                                 std::to_string(dim) + " of " + type.str() +
                                 " (size " + std::to_string(size) + ")");
        return std::nullopt;
      }
      starts[dim] = i < 0 ? i + size : i;
      limits[dim] = starts[dim] + 1;
      dropped[dim] = true;
    } else {
      if (!checkStep(builder, item))
        return std::nullopt;
      auto [lo, hi] = sliceBounds(item, size);
      strides[dim] = item.step.value_or(1);
      if (sliceLength(lo, hi, strides[dim]) == 0) {
        diag.error(item.loc, "slice " + sliceText(item) +
                                 " selects nothing from axis " +
                                 std::to_string(dim) + " of " + type.str() +
                                 " (size " + std::to_string(size) + ")");
        return std::nullopt;
      }
      starts[dim] = lo;
      limits[dim] = hi;
    }
    ++dim;
  }

  int value = base.value.tensor;
  TensorType sliced{type.dtype, {}};
  for (int64_t d = 0; d < rank; ++d)
    sliced.shape.push_back(sliceLength(starts[d], limits[d], strides[d]));
  bool whole = sliced.shape == type.shape &&
               std::all_of(strides.begin(), strides.end(),
                           [](int64_t s) { return s == 1; });
  if (!whole) {
    AttrDict attrs{{"starts", Attr(starts)},
                   {"limits", Attr(limits)},
                   {"strides", Attr(strides)}};
    value = builder.emit1("slice", {value}, sliced, std::move(attrs), loc);
  }
  TensorType result{type.dtype, {}};
  for (int64_t d = 0; d < rank; ++d)
    if (!dropped[d])
      result.shape.push_back(sliced.shape[d]);
  if (result != sliced)
    value = builder.emit1("reshape", {value}, result, {}, loc);
  return CValue::ofTensor(value);
}

} // namespace modelc
